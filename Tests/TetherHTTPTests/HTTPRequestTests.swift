import Testing
@testable import TetherHTTP

/// What a request may be before anything is sent: its parts may come from
/// a server (a token, an endpoint from a discovery document) or a user.
@Suite struct HTTPRequestTests {
    /// Methods curl would send as something else or that reach past the
    /// server (CONNECT, TRACE), a HEAD with a body, a negative bound, a
    /// header name that ends early or a value of blanks only, a URL with
    /// no host: refused, each with its reason.
    @Test func requestsThatBreakTheRulesAreRefused() {
        let url = "http://127.0.0.1/"
        let cases: [(HTTPRequest, HTTPFailure)] = [
            (HTTPRequest("CONNECT", url), .badRequest("the method is not an HTTP method")),
            (HTTPRequest("TRACE", url), .badRequest("the method is not an HTTP method")),
            (HTTPRequest("", url), .badRequest("the method is not an HTTP method")),
            (HTTPRequest("GE T", url), .badRequest("the method is not an HTTP method")),
            (HTTPRequest("HEAD", url, body: []), .badRequest("a HEAD request has no body")),
            (HTTPRequest("GET", url, maximumBody: -1), .badRequest("the largest answer body is negative")),
            (HTTPRequest("GET", url, headers: [("X-A: b", "c")]), .badRequest("a header holds a control character")),
            (HTTPRequest("GET", url, headers: [("", "c")]), .badRequest("a header holds a control character")),
            (HTTPRequest("GET", url, headers: [("X-A", "a\u{7f}")]), .badRequest("a header holds a control character")),
            (HTTPRequest("GET", url, headers: [("X-A", " \t ")]), .badRequest("a header has no value")),
            (HTTPRequest("GET", "http:///x"), .badURL),
            (HTTPRequest("GET", "https://?q"), .badURL),
            (HTTPRequest("GET", "http://127.0.0.1/\u{7f}"), .badURL),
        ]
        for (request, expected) in cases {
            #expect(request.refusal == expected, "\(request.method) \(request.url) \(request.headers)")
        }
        for request in [HTTPRequest("POST", "HTTPS://Example.com/t", headers: [("Authorization", "Bearer a\tb")], body: [1]),
                        HTTPRequest("HEAD", url)] {
            #expect(request.refusal == nil, "\(request.method) \(request.url)")
        }
    }

    /// Any deadline given (a server's, a flag's) is between a millisecond
    /// and a day, never a trap.
    @Test func anyDeadlineIsWithinAMillisecondAndADay() {
        let cases: [(Double, Int)] = [(.nan, 86_400_000), (.infinity, 86_400_000), (-.infinity, 86_400_000), (1e300, 86_400_000),
                                      (-5, 1), (0, 1), (2.5, 2_500), (86_401, 86_400_000)]
        for (seconds, milliseconds) in cases {
            #expect(HTTPRequest("GET", "http://127.0.0.1/", timeout: seconds).timeoutMilliseconds == milliseconds, "\(seconds)")
        }
    }
}
