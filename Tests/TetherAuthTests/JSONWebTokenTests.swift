import Testing
@testable import TetherAuth
import TetherHTTP
import TetherLoop

@Suite struct JSONWebTokenTests {
    @Test func base64URLWithoutPaddingMatchesRFC7515AppendixC() {
        // RFC 7515 appendix C: these five octets encode as "A-z_4ME".
        let octets: [UInt8] = [3, 236, 255, 224, 193]
        #expect(Base64URL.encode(octets) == "A-z_4ME")
        #expect(Base64URL.decode("A-z_4ME") == octets)
        #expect(Base64URL.decode("A-z_4ME=") == octets, "padding is tolerated")
    }

    @Test func base64URLRefusesWhatIsNotInItsAlphabet() {
        #expect(Base64URL.decode("A+z/4ME") == nil, "standard base64's + and / are not base64url")
        #expect(Base64URL.decode("A-z_4") == nil, "a lone trailing sextet")
        #expect(Base64URL.decode("") == [])
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes)
        }
    }

    @Test func readsExpFromTheRFC7515AppendixAExample() throws {
        // RFC 7515 A.1: the payload carries "exp":1300819380 and no padding.
        let token = "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9"
            + ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
            + ".dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        let jwt = try #require(JSONWebToken(token))
        #expect(jwt.expiresAt == 1_300_819_380)
        #expect(jwt.claims["iss"]?.stringValue == "joe")
    }

    @Test func opaqueAndMalformedTokensAreNotJWTs() {
        #expect(JSONWebToken("2YotnFZFEjr1zCsicMWpAA") == nil)
        #expect(JSONWebToken("a.b") == nil)
        #expect(JSONWebToken("a.!!!.c") == nil)
        #expect(JSONWebToken("a.\(Base64URL.encode(Array("[1]".utf8))).c") == nil, "claims must be an object")
    }

    @Test func refreshIsDueWithinTheLeewayOfExpiry() {
        let set = TokenSet(accessToken: "t", expiresAt: 1_000)
        #expect(!set.needsRefresh(now: 900, leeway: 60))
        #expect(set.needsRefresh(now: 950, leeway: 60))
        #expect(!set.isExpired(now: 950))
        #expect(set.isExpired(now: 1_000))
        #expect(!TokenSet(accessToken: "t").needsRefresh(now: 1e12, leeway: 60), "no expiry known: used until refused")
    }

    @Test func aShortLivedTokenIsNotDueTheMomentItArrives() {
        // Lives 30 s; a 60 s leeway would make it due at once. Half its life is the cap.
        let set = TokenSet(accessToken: "t", expiresAt: 1_030, receivedAt: 1_000)
        #expect(!set.needsRefresh(now: 1_000, leeway: 60))
        #expect(!set.needsRefresh(now: 1_014, leeway: 60))
        #expect(set.needsRefresh(now: 1_015, leeway: 60))
        #expect(TokenSet(set.jsonValue) == set, "receivedAt is stored")
        let alreadyExpired = TokenSet(accessToken: "t", expiresAt: 995, receivedAt: 1_000)
        #expect(alreadyExpired.needsRefresh(now: 1_000, leeway: 60))
    }

    @Test func descriptionsNeverShowASecret() throws {
        let set = TokenSet(accessToken: "access-secret", refreshToken: "refresh-secret", expiresAt: 5)
        let configuration = AuthConfiguration(tokenURL: "http://x/token", clientID: "id", clientSecret: "client-secret")
        let endpoint = TokenEndpoint(configuration: configuration, http: HTTPClient(loop: try EventLoop()))
        for text in ["\(set)", "\(configuration)", "\(endpoint)"] {
            #expect(!text.contains("secret-") && !text.contains("-secret"), "\(text)")
        }
    }

    @Test func storedFormRoundTrips() {
        let set = TokenSet(accessToken: "a", refreshToken: "r", expiresAt: 12.5, scope: "orders", subject: "alice")
        #expect(TokenSet(set.jsonValue) == set)
        #expect(TokenSet(.object(["accessToken": ""])) == nil)
    }

    @Test func formEncodingFollowsTheHTMLRules() {
        #expect(OAuth2Requests.formEncode("a b&c=d/é") == "a+b%26c%3Dd%2F%C3%A9")
        #expect(OAuth2Requests.formEncode("A-z_.*9") == "A-z_.*9")
    }
}
