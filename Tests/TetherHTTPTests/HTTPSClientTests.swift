import Testing
import TetherHTTP
import TetherTestSupport

/// TLS against a real server with a certificate of its own making
/// (`HostileHTTPServer`: Python's ssl and openssl(1)): the client refuses it.
@Suite(.timed) struct HTTPSClientTests {
    @Test func aSelfSignedCertificateIsRefused() async throws {
        let directory = try TemporaryDirectory("tether-http")
        let server = try HostileHTTPServer(in: directory, tls: true)
        let (failure, _) = try await HTTPClientTests.failure(of: HTTPRequest("GET", server.baseURL + "/ok", timeout: 20))
        #expect(failure == .insecure)
    }
}
