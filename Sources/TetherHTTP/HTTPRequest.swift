/// One HTTP request: what to send, where, and how long and how much of
/// an answer to wait for.
package struct HTTPRequest: Sendable {
    package var method: String
    package var url: String
    package var headers: [(String, String)]
    package var body: [UInt8]?
    /// Seconds from the start to the last byte of the answer, connecting
    /// included: slow headers and a body trickled a byte at a time are cut
    /// off here, so nothing waits on a server longer than this.
    package var timeout: Double
    /// The largest answer body taken; a larger one fails the request.
    package var maximumBody: Int

    /// The total deadline when none is given.
    package static let defaultTimeout: Double = 30
    /// Token and JSON answers are small.
    package static let defaultMaximumBody = 4 << 20

    package init(_ method: String = "GET", _ url: String, headers: [(String, String)] = [], body: [UInt8]? = nil,
                 timeout: Double = defaultTimeout, maximumBody: Int = defaultMaximumBody) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.maximumBody = maximumBody
    }

    /// True for an absolute http:// or https:// URL with a host.
    package static func isHTTPURL(_ url: String) -> Bool {
        let lower = url.lowercased()
        for scheme in ["https://", "http://"] where lower.hasPrefix(scheme) {
            let rest = lower.dropFirst(scheme.count)
            return !rest.isEmpty && rest.first != "/" && rest.first != "?" && rest.first != "#"
        }
        return false
    }

    /// The deadline in whole milliseconds, within 1 ms and a day (a NaN or
    /// infinite one is a day).
    var timeoutMilliseconds: Int {
        guard timeout.isFinite else { return 86_400_000 }
        return Int(max(0.001, min(timeout, 86_400)) * 1000)
    }

    /// Why the request cannot be sent as it is, or nil.
    var refusal: HTTPFailure? {
        guard Self.isHTTPURL(url), !url.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7f }) else { return .badURL }
        guard !method.isEmpty, method.utf8.allSatisfy({ (0x41...0x5a).contains($0) }), method != "CONNECT", method != "TRACE" else {
            return .badRequest("the method is not an HTTP method")
        }
        if method == "HEAD", body != nil { return .badRequest("a HEAD request has no body") }
        if maximumBody < 0 { return .badRequest("the largest answer body is negative") }
        for (name, value) in headers {
            // A line break in a value (a token from a hostile server, say)
            // would add a header of its own.
            guard !name.isEmpty, name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f && $0 != UInt8(ascii: ":") }),
                  value.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7f || $0 == UInt8(ascii: "\t") })
            else { return .badRequest("a header holds a control character") }
            // curl would drop it, and the header of that name it sends itself.
            guard value.utf8.contains(where: { $0 != 0x20 && $0 != 0x09 }) else {
                return .badRequest("a header has no value")
            }
        }
        return nil
    }
}

/// The answer to an `HTTPRequest`: any status, 3xx included (redirects are
/// not followed: a credential goes only where it was meant to).
package struct HTTPResponse: Sendable {
    package let status: Int
    package let body: [UInt8]

    package init(status: Int, body: [UInt8]) {
        self.status = status
        self.body = body
    }
}
