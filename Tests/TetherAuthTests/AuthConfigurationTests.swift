import Testing
@testable import TetherAuth

/// Whose data is shown: the user's identity is the server and the subject.
@Suite struct AuthConfigurationTests {
    static func jwt(_ payload: String) -> String {
        "e30." + Base64URL.encode(Array(payload.utf8)) + ".sig"
    }

    @Test func aUsersIdentityIsTheServerAndTheSubject() {
        let byURL = AuthConfiguration(tokenURL: "https://auth.example.com/token", clientID: "c")
        let byIssuer = AuthConfiguration(tokenURL: "https://auth.example.com/token", clientID: "c", issuer: "https://id.example.com")
        let alice = TokenSet(accessToken: Self.jwt(#"{"sub":"u-1"}"#), subject: "alice")
        #expect(byURL.userIdentity(of: alice) == "https://auth.example.com u-1", "the JWT's sub before the name")
        #expect(byIssuer.userIdentity(of: alice) == "https://id.example.com u-1")
        // The same subject at another server is someone else.
        let elsewhere = AuthConfiguration(tokenURL: "https://other.example.com/token", clientID: "c")
        #expect(elsewhere.userIdentity(of: alice) != byURL.userIdentity(of: alice))
        #expect(byURL.userIdentity(of: TokenSet(accessToken: "opaque", subject: "alice")) == "https://auth.example.com alice")
        #expect(byURL.userIdentity(of: TokenSet(accessToken: "opaque")) == nil, "unknown: the caller treats it as someone else")
    }
}
