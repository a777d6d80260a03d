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
    /// that prints the token, is refused at the answer.
    @Test(arguments: [#"{"access_token":"a1\r\nX-Evil: 1","refresh_token":"r1"}"#,
                      #"{"access_token":"a1","refresh_token":"r1\u001b]0;owned\u0007"}"#])
    func aTokenWithControlCharactersIsRefused(_ body: String) async throws {
        let outcome = try await Self.refresh { _ in .json(body) }
        #expect(!outcome.hasPrefix("access"), "\(outcome)")
        #expect(!outcome.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "\(outcome)")
    }

    /// A 2xx page that is not a token answer (a captive portal, a proxy's
    /// page) is a broken server, not refused credentials: the session stays.
    @Test func aPageThatIsNoAnswerIsAnUnavailableServer() async throws {
        let outcome = try await Self.refresh { _ in
            .reply(status: 200, headers: [("Content-Type", "text/html")], body: Array("<html>welcome</html>".utf8))
        }
        #expect(outcome.contains("unavailable") || outcome.contains("HTTP 200"), "\(outcome)")
    }
}
