import Glibc
import Synchronization
import Testing
@testable import TetherAuth
import TetherHTTP
import TetherLoop
import TetherTestSupport

/// Discovery (RFC 8414, then OpenID Connect's document) against documents
/// a server made to mislead: served by a responder in this process on a
/// loopback port (`LoopbackHTTPServer`), read by the real client (libcurl on a loop).
@Suite(.timed) struct AuthorizationServerMetadataTests {
    /// What each path of the responder answers, set once its port is known.
    final class Routes: Sendable {
        let table = Mutex<[String: (status: Int, body: String)]>([:])
    }

    static func document(issuer: String, token: String, extra: String = "") -> String {
        #"{"issuer":"\#(issuer)","token_endpoint":"\#(token)"\#(extra)}"#
    }

    /// What discovery makes of `routes`, for the issuer at `/tenant`.
    static func discover(_ routes: (String) -> [String: (status: Int, body: String)]) async throws
        -> (issuer: String, outcome: Result<AuthorizationServerMetadata, AuthorizationServerMetadata.Failure>) {
        let table = Routes()
        let responder = try LoopbackHTTPServer { _, path in
            let (status, body) = table.table.withLock { $0[path] } ?? (404, "")
            return .json(body, status: status)
        }
        defer { responder.stop() }
        let issuer = responder.baseURL + "/tenant"
        let answers = routes(issuer)
        table.table.withLock { $0 = answers }
        let thread = try EventLoopThread()
        defer { thread.shutdown() }
        let http = HTTPClient(loop: thread.loop)
        do {
            return (issuer, .success(try await AuthorizationServerMetadata.discover(issuer: issuer, allowsInsecureHTTP: false,
                                                                                    http: http, timeout: 20)))
        } catch {
            return (issuer, .failure(error))
        }
    }

    static let rfc8414 = "/.well-known/oauth-authorization-server/tenant"
    static let openID = "/tenant/.well-known/openid-configuration"

    /// No RFC 8414 document (a 404, or a catch-all page that is no JSON):
    /// OpenID Connect's, with its optional endpoints.
    @Test(arguments: [(404, "not here"), (200, "<html>welcome</html>")])
    func theOpenIDDocumentIsReadWhenTheFirstIsNotThere(_ status: Int, _ page: String) async throws {
        let (issuer, outcome) = try await Self.discover { issuer in
            [Self.rfc8414: (status, page),
             Self.openID: (200, Self.document(issuer: issuer, token: issuer + "/token",
                                              extra: #","revocation_endpoint":"\#(issuer)/revoke""#))]
        }
        let metadata = try outcome.get()
        #expect(metadata.tokenEndpoint == issuer + "/token" && metadata.revocationEndpoint == issuer + "/revoke")
        #expect(metadata.deviceAuthorizationEndpoint == nil)
    }

    /// A document that names another issuer (another server posing as
    /// this one), an endpoint with a terminal escape, one too long, one in
    /// clear to another machine, or none: refused, saying why in plain text.
    @Test func aMisleadingDocumentIsRefused() async throws {
        let cases: [((String) -> String, String)] = [
            ({ _ in Self.document(issuer: "https://evil.example\\u001b]0;x\\u0007", token: "https://evil.example/token") },
             "names another issuer, https://evil.example]0;x"),
            ({ Self.document(issuer: $0, token: $0 + "/token\\u001b[2J") }, "has an endpoint that is not a plain URL"),
            ({ Self.document(issuer: $0, token: $0 + "/" + String(repeating: "a", count: 2_048)) },
             "has an endpoint that is not a plain URL"),
            ({ Self.document(issuer: $0, token: "http://evil.example/token") }, "refusing to send credentials in clear"),
            ({ #"{"issuer":"\#($0)"}"# }, "names no token_endpoint"),
        ]
        for (document, expected) in cases {
            let (_, outcome) = try await Self.discover { [Self.rfc8414: (200, document($0))] }
            guard case .failure(let failure) = outcome else {
                Issue.record("accepted: \(expected)")
                continue
            }
            #expect(failure.description.contains(expected), "\(failure)")
            #expect(!failure.description.unicodeScalars.contains { $0.value < 0x20 }, "\(failure)")
        }
        let (issuer, outcome) = try await Self.discover { _ in [:] }
        guard case .failure(let failure) = outcome else {
            Issue.record("discovered nothing, and said nothing")
            return
        }
        #expect(failure.description.hasPrefix("no discovery document for \(issuer) (")
                && failure.description.hasSuffix("\(Self.rfc8414): HTTP 404; \(issuer)/.well-known/openid-configuration: HTTP 404)"),
                "\(failure)")
    }
}
