import Testing
@testable import TetherAuth
import TetherHTTP
import TetherJSON
import TetherTestSupport

/// The device grant (RFC 8628) against a server that means harm or is
/// broken, in memory: what it says reaches a terminal only as plain text,
/// its numbers cannot make the login poll in a tight loop or forever, and
/// each way a poll can end is the one the user is told.
@Suite(.timed) struct DeviceAuthorizationTests {
    static let deviceURL = "https://auth.example/device_authorization"

    static func endpoint(_ server: InMemoryTokenServer) -> TokenEndpoint {
        TokenEndpoint(configuration: AuthConfiguration(tokenURL: AuthFixture.tokenURL, clientID: "app"), transport: server)
    }

    /// A device authorization answer: `fields` over a usable one.
    static func answer(_ fields: [String: JSONValue] = [:], without absent: String? = nil) -> JSONValue {
        var object: [String: JSONValue] = ["device_code": "dc1", "user_code": "BCDF-GHJK",
                                           "verification_uri": "https://auth.example/device"]
        for (key, value) in fields { object[key] = value }
        if let absent { object[absent] = nil }
        return .object(object)
    }

    static func response(_ body: JSONValue, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, body: JSONCodec.serialize(body))
    }

    /// A user code and links with terminal escapes: the code is shown
    /// without them (at most 64 characters), a link with them or with
    /// spaces is refused, or dropped where it is optional.
    @Test func whatTheServerSaysIsShownAsPlainTextOnly() throws {
        let shown = try #require(DeviceAuthorization(Self.answer([
            "user_code": .string("\u{1b}]0;owned\u{07}BCDF\r\u{1b}[2J-GHJK" + String(repeating: "X", count: 200)),
            "verification_uri_complete": "https://auth.example/device?code=\u{1b}[31m",
        ])))
        #expect(shown.userCode.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7f })
        #expect(shown.userCode.hasPrefix("]0;ownedBCDF[2J-GHJK") && shown.userCode.count == 64, "\(shown.userCode)")
        #expect(shown.verificationURIComplete == nil)
        #expect(shown.verificationURI == "https://auth.example/device")

        for uri: JSONValue in ["https://auth.example/device\u{1b}[2J", "https://auth.example/a b", "javascript:alert(1)",
                               .string("https://auth.example/" + String(repeating: "a", count: 3_000)), 42] {
            #expect(DeviceAuthorization(Self.answer(["verification_uri": uri])) == nil, "\(uri)")
        }
        // Nothing left to show, or nothing to poll with.
        #expect(DeviceAuthorization(Self.answer(["user_code": "\u{1b}\u{07}\u{7f}"])) == nil)
        #expect(DeviceAuthorization(Self.answer(["device_code": ""])) == nil)
        #expect(DeviceAuthorization(.array([])) == nil && DeviceAuthorization(nil) == nil)
        // Google's spelling of the link.
        let google = Self.answer(["verification_url": "https://www.google.com/device"], without: "verification_uri")
        #expect(DeviceAuthorization(google)?.verificationURI == "https://www.google.com/device")
    }

    /// A server's interval and lifetime are kept within 1 s to 5 minutes
    /// and 1 s to a day: never a poll loop without a pause, never a login
    /// that waits for ever. Absent, RFC 8628's defaults.
    @Test func itsNumbersAreBounded() throws {
        let cases: [(interval: JSONValue?, expiresIn: JSONValue?, pause: Double, lifetime: Double)] = [
            (nil, nil, 5, 600), (0, 0, 1, 1), (-5, -5, 1, 1), (1e9, 1e12, 300, 86_400), (2.5, 30, 2.5, 30),
            ("1", "soon", 5, 600),
        ]
        for bounds in cases {
            var fields: [String: JSONValue] = [:]
            if let interval = bounds.interval { fields["interval"] = interval }
            if let expiresIn = bounds.expiresIn { fields["expires_in"] = expiresIn }
            let authorization = try #require(DeviceAuthorization(Self.answer(fields)))
            #expect(authorization.interval == bounds.pause && authorization.expiresIn == bounds.lifetime, "\(bounds)")
        }
    }

    /// The request names the client; what comes back is classified: an
    /// answer without a usable code is the server's fault (worth trying
    /// again), a refusal says its code as plain text.
    @Test func askingForACodeClassifiesEachAnswer() async throws {
        let answers: [(HTTPResponse, TokenEndpointError?)] = [
            (Self.response(Self.answer()), nil),
            (Self.response(Self.answer(["verification_uri": "not a link"])), .serverUnavailable(status: 200)),
            (HTTPResponse(status: 200, body: Array("<html>".utf8)), .serverUnavailable(status: 200)),
            (Self.response(["error": "invalid_client"], status: 400), .invalidClient),
            (HTTPResponse(status: 401, body: []), .invalidClient),
            (Self.response(["error": "unauthorized_client\u{1b}[2J"], status: 400),
             .rejected(status: 400, code: "unauthorized_client[2J")),
            (HTTPResponse(status: 429, body: []), .serverUnavailable(status: 429)),
            (HTTPResponse(status: 502, body: []), .serverUnavailable(status: 502)),
        ]
        for (answer, expected) in answers {
            let server = InMemoryTokenServer(always: answer)
            do {
                let authorization = try await Self.endpoint(server).authorizeDevice(at: Self.deviceURL)
                #expect(expected == nil && authorization.deviceCode == "dc1", "\(answer.status)")
            } catch {
                #expect(error == expected, "\(answer.status)")
            }
            #expect(server.requests.map(\.url) == [Self.deviceURL] && server.requests.first?.form["client_id"] == "app")
        }
    }

    /// Polls that end: approved after two pendings (each poll sends the
    /// device code), denied, expired at the server, or refused.
    @Test(.waits, arguments: [("approved", 3), ("access_denied", 1), ("expired_token", 1), ("invalid_grant", 1)])
    func aPollEndsAsTheServerSays(_ outcome: String, _ polls: Int) async throws {
        let server = InMemoryTokenServer { _, index in
            guard outcome == "approved" else { return .success(InMemoryTokenServer.refusal(outcome)) }
            return .success(index < 2 ? InMemoryTokenServer.refusal("authorization_pending")
                                      : InMemoryTokenServer.tokens("a1", refresh: "r1"))
        }
        let authorization = try #require(DeviceAuthorization(Self.answer(["interval": 1])))
        let expected: DeviceAuthorization.Failure? = switch outcome {
        case "access_denied": .denied
        case "expired_token": .expired
        case "invalid_grant": .endpoint(.invalidGrant)
        default: nil
        }
        do {
            let tokens = try await Self.endpoint(server).pollDevice(authorization)
            #expect(expected == nil && tokens.accessToken == "a1" && tokens.refreshToken == "r1")
        } catch {
            #expect(error == expected)
        }
        #expect(server.requests.count == polls)
        #expect(server.requests.allSatisfy { $0.form["device_code"] == "dc1" && $0.url == AuthFixture.tokenURL })
    }

    /// Told to slow down, or failing, the server is polled less often, and
    /// the code's lifetime still ends the login: in 3 s at 1 s a poll, the
    /// third poll would come at 3 s; after `slow_down` (5 s more) or a 503
    /// (twice the pause) the second comes at the end of the lifetime, and
    /// there is no third.
    @Test(.waits, arguments: [InMemoryTokenServer.refusal("slow_down"), InMemoryTokenServer.unavailable()])
    func aServerThatAsksForLessIsPolledLess(_ answer: HTTPResponse) async throws {
        let server = InMemoryTokenServer(always: answer)
        let authorization = try #require(DeviceAuthorization(Self.answer(["interval": 1, "expires_in": 3])))
        await #expect(throws: DeviceAuthorization.Failure.expired) {
            _ = try await Self.endpoint(server).pollDevice(authorization)
        }
        #expect(server.requests.count == 2)
    }
}
