/// The origin of an http(s) URL (RFC 6454): scheme, host and port, which
/// decide where a credential may be sent.
public struct URLOrigin: Sendable, Hashable, CustomStringConvertible {
    /// "http" or "https".
    public let scheme: String
    /// Lowercased; an IPv6 address without its brackets.
    public let host: String
    public let port: Int

    /// nil unless `url` is an absolute http:// or https:// URL with a host.
    public init?(_ url: String) {
        let lower = url.lowercased()
        guard let scheme = ["https", "http"].first(where: { lower.hasPrefix($0 + "://") }) else { return nil }
        var authority = lower.dropFirst(scheme.count + 3).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let rest = authority[authority.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { return nil }
                portText = rest.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty else { return nil }
        let defaultPort = scheme == "https" ? 443 : 80
        var port = defaultPort
        if let portText, !portText.isEmpty {
            guard portText.allSatisfy(\.isASCII), let number = Int(portText), (1...65_535).contains(number) else { return nil }
            port = number
        }
        self.scheme = scheme
        self.host = String(host)
        self.port = port
    }

    /// An origin as written, `scheme://host[:port]` (a '/' after it
    /// allowed): nil for anything with a path, query, fragment or user.
    public init?(origin text: String) {
        let authority = text.drop { $0 != ":" }.dropFirst(3)
        let rest = authority.drop { !"/?#@".contains($0) }
        guard rest.isEmpty || rest == "/" else { return nil }
        self.init(text)
    }

    /// https, where nothing sent can be read on the way.
    public var isSecure: Bool { scheme == "https" }

    /// This machine: `localhost`, 127.0.0.0/8 or ::1. Plain http there
    /// never leaves the machine.
    public var isLoopback: Bool {
        if host == "localhost" || host == "::1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127"
            && parts.allSatisfy { part in part.allSatisfy(\.isASCII) && UInt8(part) != nil }
    }

    /// scheme://host[:port], the port only where it is not the scheme's default.
    public var description: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        let defaultPort = scheme == "https" ? 443 : 80
        return "\(scheme)://\(shownHost)" + (port == defaultPort ? "" : ":\(port)")
    }
}
