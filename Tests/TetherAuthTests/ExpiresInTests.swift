import Testing
@testable import TetherAuth
import TetherHTTP
import TetherJSON
import TetherTestSupport

/// `expires_in` as some servers send it, a string: digits are read as a
/// number; anything else is a clear error that loses nothing, since the
/// answer also rotated the refresh token.
@Suite(.timed) struct ExpiresInTests {
    /// A 200 with `access` and `refresh`, `expires_in` the string `value`.
    static func answer(_ access: String, _ refresh: String, expiresIn value: String) -> HTTPResponse {
        let object: [String: JSONValue] = ["access_token": .string(access), "refresh_token": .string(refresh),
                                           "token_type": "Bearer", "expires_in": .string(value)]
        return HTTPResponse(status: 200, body: JSONCodec.serialize(.object(object)))
    }

    @Test func aNumericStringIsANumberOfSeconds() async throws {
        let fixture = try AuthFixture()
        try fixture.save(AuthFixture.expired("a1", refresh: "r1"))
        let server = InMemoryTokenServer(always: Self.answer("a2", "r2", expiresIn: "3600"))
        let broker = try fixture.broker(server)
        // The second use finds the token good for an hour.
        for _ in 0..<2 { #expect(try await broker.accessToken(.user) == "a2") }
        #expect(server.requests.count == 1)
        let expiresIn = try #require(try fixture.stored()?.expiresAt) - AuthFixture.now
        #expect(expiresIn > 3_500 && expiresIn <= 3_600, "\(expiresIn)")
    }

    @Test func anythingElseIsAnErrorAndTheRotatedTokenIsKept() async throws {
        let fixture = try AuthFixture()
        try fixture.save(AuthFixture.expired("a1", refresh: "r1"))
        // Each answer rotates: r2, r3, r4.
        let server = InMemoryTokenServer { _, index in .success(Self.answer("a\(index + 2)", "r\(index + 2)", expiresIn: "soon")) }
        let broker = try fixture.broker(server)
        for _ in 0..<3 {
            await #expect {
                _ = try await broker.accessToken(.user)
            } throws: { error in
                "\(error)".contains("expires_in (soon) is not a number of seconds")
            }
        }
        // Each refresh sent the token the one before received: none was lost.
        #expect(server.requests.map { $0.form["refresh_token"] } == ["r1", "r2", "r3"])
        let stored = try #require(try fixture.stored(), "the session goes on")
        #expect(stored.refreshToken == "r4")
    }
}
