import Foundation
import Testing
@testable import TetherAuth
import TetherHTTP
import TetherJSON
import TetherLoop
import TetherTestSupport

/// The token endpoint through the real client (libcurl on a loop) against a
/// token server in the test's own process (`LoopbackHTTPServer`) that
/// answers as no server should: each answer is one clear outcome, nothing
/// it sends reaches a terminal or a header unchecked.
@Suite(.timed) struct TokenEndpointHTTPTests {
    /// What a refresh at `path` comes to: the set, or the error's words.
    static func refresh(answering answer: @escaping @Sendable (String) -> LoopbackHTTPServer.Answer,
                        timeout: Double = 20) async throws -> String {
        let server = try LoopbackHTTPServer { _, path in answer(path) }
        defer { server.stop() }
        let thread = try EventLoopThread()
        defer { thread.shutdown() }
        let endpoint = TokenEndpoint(configuration: AuthConfiguration(tokenURL: server.baseURL + "/token", clientID: "app"),
                                     http: HTTPClient(loop: thread.loop), timeout: timeout)
        do throws(TokenEndpointError) {
            let tokens = try await endpoint.request(.refreshToken("r0"), now: 1_000)
            return "access \(tokens.accessToken), refresh \(tokens.refreshToken ?? "none")"
        } catch {
            return "\(error)"
        }
    }

    @Test func aGoodAnswerIsTheSet() async throws {
        let outcome = try await Self.refresh { _ in .json(#"{"access_token":"a1","refresh_token":"r1","expires_in":60}"#) }
        #expect(outcome == "access a1, refresh r1")
    }

    /// Tokens holding a line break or a terminal escape: a server that
    /// would smuggle a header into every request, or rewrite a terminal
    /// that prints the token, is refused at the answer, naming the field.
    @Test(arguments: [(#"{"access_token":"a1\r\nX-Evil: 1"}"#, "access_token"),
                      (#"{"access_token":"a1","refresh_token":"r1\u001b]0;owned\u0007"}"#, "refresh_token")])
    func aTokenWithControlCharactersIsRefused(_ body: String, _ field: String) async throws {
        let outcome = try await Self.refresh { _ in .json(body) }
        #expect(outcome == "the token server's answer cannot be used: its \(field) holds a character no token may"
                + " (a control character or beyond ASCII)", "\(outcome)")
    }

    /// A bad access token beside a good rotated refresh token: the refresh
    /// token is kept (the server retired the old one), the access token is
    /// kept expired without its bad characters, and the problem is told.
    @Test func aRotatedRefreshTokenIsKeptBesideABadAccessToken() async throws {
        let server = try LoopbackHTTPServer { _, _ in
            .json(#"{"access_token":"a1\r\nX-Evil: 1","refresh_token":"r2","scope":"read\u0007","expires_in":60}"#)
        }
        defer { server.stop() }
        let thread = try EventLoopThread()
        defer { thread.shutdown() }
        let endpoint = TokenEndpoint(configuration: AuthConfiguration(tokenURL: server.baseURL + "/token", clientID: "app"),
                                     http: HTTPClient(loop: thread.loop), timeout: 20)
        let (tokens, problem) = try await endpoint.answer(.refreshToken("r1"), now: 1_000)
        #expect(tokens.refreshToken == "r2")
        #expect(tokens.accessToken == "a1X-Evil:1" && tokens.scope == nil)
        #expect(tokens.expiry == JSONNumber(1_000))
        #expect(problem != nil)
    }

    /// A 2xx page that is not a token answer (a captive portal, a proxy's
    /// page) is a broken server, not refused credentials: the session stays.
    @Test func aPageThatIsNoAnswerIsAnUnavailableServer() async throws {
        let outcome = try await Self.refresh { _ in
            .reply(status: 200, headers: [("Content-Type", "text/html")], body: Array("<html>welcome</html>".utf8))
        }
        #expect(outcome.contains("unavailable") || outcome.contains("HTTP 200"), "\(outcome)")
    }

    /// A server that sends its headers, then a byte a second, cannot hold
    /// a refresh (and the group's refresh lock) past the request's bound.
    @Test(.waits) func aTricklingServerIsCutAtTheDeadline() async throws {
        let started = MonotonicClock.nanoseconds()
        let outcome = try await Self.refresh(answering: { _ in
            .trickle(head: LoopbackHTTPServer.Answer.head("200 OK", [("Content-Type", "application/json"), ("Content-Length", "100000")]))
        }, timeout: 2)
        let took = Double(MonotonicClock.nanoseconds() - started) / 1e9
        #expect(outcome.contains("timed out"), "\(outcome)")
        #expect(took >= 1.9 && took < 6, "took \(took) s")
    }

    /// An answer larger than any token set (10 MiB) is cut, not read whole.
    @Test func anAnswerLargerThanATokenSetIsCut() async throws {
        let outcome = try await Self.refresh { _ in
            .stream(head: LoopbackHTTPServer.Answer.head("200 OK", [("Content-Length", "\(10 << 20)")]),
                    chunk: [UInt8](repeating: 0x20, count: 65_536), count: 160)
        }
        #expect(outcome.contains("larger than"), "\(outcome)")
    }

    /// A redirect is the server's answer, not followed with the refresh
    /// token to wherever it points.
    @Test func aRedirectIsNotFollowedWithTheRefreshToken() async throws {
        let server = try LoopbackHTTPServer { _, path in
            path == "/token" ? .reply(status: 307, headers: [("Location", "/elsewhere")]) : .json(#"{"access_token":"stolen"}"#)
        }
        defer { server.stop() }
        let thread = try EventLoopThread()
        defer { thread.shutdown() }
        let endpoint = TokenEndpoint(configuration: AuthConfiguration(tokenURL: server.baseURL + "/token", clientID: "app"),
                                     http: HTTPClient(loop: thread.loop), timeout: 20)
        let outcome: String
        do throws(TokenEndpointError) {
            outcome = "access \(try await endpoint.request(.refreshToken("r0")).accessToken)"
        } catch {
            outcome = "\(error)"
        }
        #expect(!outcome.hasPrefix("access"), "\(outcome)")
        #expect(server.counts["/elsewhere"] == nil)
    }
}
