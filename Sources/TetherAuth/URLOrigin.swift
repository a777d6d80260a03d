/// The origin of an http(s) URL (RFC 6454): scheme, host and port, which
/// decide where a credential may be sent.
package struct URLOrigin: Sendable, Hashable, CustomStringConvertible {
    /// "http" or "https".
    package let scheme: String
    /// Lowercased; an IPv6 address without its brackets.
    package let host: String
    package let port: Int

    /// nil unless `url` is an absolute http:// or https:// URL with a host.
    /// Only ASCII is read, and lowercased as ASCII: a Unicode case mapping
    /// (the Kelvin sign to "k") would make a name match an origin that the
    /// HTTP client then resolves as written.
    package init?(_ url: String) {
        let bytes = Array(url.utf8)
        let scheme: String
        if Self.hasPrefix(bytes, "https://") { scheme = "https" } else if Self.hasPrefix(bytes, "http://") { scheme = "http" } else { return nil }
        var authority = bytes.dropFirst(scheme.utf8.count + 3).prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        if let at = authority.lastIndex(of: UInt8(ascii: "@")) { authority = authority[(at + 1)...] }
        guard authority.allSatisfy({ $0 < 0x80 }) else { return nil }
        let lower = authority.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 + 32 : $0 }
        var host: ArraySlice<UInt8>
        var portText: ArraySlice<UInt8> = []
        if lower.first == UInt8(ascii: "[") {
            guard let close = lower.firstIndex(of: UInt8(ascii: "]")) else { return nil }
            host = lower[1..<close]
            let rest = lower[(close + 1)...]
            if !rest.isEmpty {
                guard rest.first == UInt8(ascii: ":") else { return nil }
                portText = rest.dropFirst()
            }
            guard host.allSatisfy({ Self.isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") }) else { return nil }
        } else {
            if let colon = lower.lastIndex(of: UInt8(ascii: ":")) {
                host = lower[..<colon]
                portText = lower[(colon + 1)...]
            } else {
                host = lower[...]
            }
            guard host.allSatisfy({ Self.isNameByte($0) }) else { return nil }
        }
        guard !host.isEmpty else { return nil }
        var port = scheme == "https" ? 443 : 80
        if !portText.isEmpty {
            guard let number = Self.decimal(portText, maxDigits: 5), (1...65_535).contains(number) else { return nil }
            port = number
        }
        self.scheme = scheme
        self.host = String(decoding: host, as: UTF8.self)
        self.port = port
    }

    /// An origin as written, `scheme://host[:port]` (a '/' after it
    /// allowed): nil for anything with a path, query, fragment or user.
    package init?(origin text: String) {
        let authority = text.drop { $0 != ":" }.dropFirst(3)
        let rest = authority.drop { !"/?#@".contains($0) }
        guard rest.isEmpty || rest == "/" else { return nil }
        self.init(text)
    }

    /// https, where nothing sent can be read on the way.
    package var isSecure: Bool { scheme == "https" }

    /// This machine: `localhost`, 127.0.0.0/8 or ::1. Plain http there
    /// never leaves the machine.
    package var isLoopback: Bool {
        if host == "localhost" || host == "::1" { return true }
        let parts = host.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return parts.count == 4 && Array(parts[0]) == Array("127".utf8)
            && parts.allSatisfy { Self.decimal($0, maxDigits: 3).map { $0 <= 255 } ?? false }
    }

    /// Plain decimal digits only: `Int("+1")` would take a sign.
    private static func decimal<Bytes: Collection<UInt8>>(_ bytes: Bytes, maxDigits: Int) -> Int? {
        guard !bytes.isEmpty, bytes.count <= maxDigits else { return nil }
        var value = 0
        for byte in bytes {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    private static func hasPrefix(_ bytes: [UInt8], _ prefix: String) -> Bool {
        bytes.count >= prefix.utf8.count
            && zip(bytes, prefix.utf8).allSatisfy { ($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 + 32 : $0) == $1 }
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }

    /// A DNS name or IPv4 address: letters, digits, '-', '.', '_'.
    private static func isNameByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
    }

    /// scheme://host[:port], the port only where it is not the scheme's default.
    package var description: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        let defaultPort = scheme == "https" ? 443 : 80
        return "\(scheme)://\(shownHost)" + (port == defaultPort ? "" : ":\(port)")
    }
}
