import Foundation
import Testing
import TetherTestSupport

/// Proxies come from the environment as curl reads them, but loopback never
/// goes through one: a token server on 127.0.0.1 is reached directly even
/// when every proxy variable names a port where nothing listens.
@Suite(.timed) struct ProxyTests {
    @Test func loopbackIsNeverSentThroughAProxy() throws {
        let group = try TestGroup()
        let server = try DemoServer(in: group.dir)
        try server.loginExpired(group)
        let dead = "http://127.0.0.1:\(try LoopbackSocket.unusedPort())"
        var environment: [String: String] = [:]
        for name in ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"] {
            environment[name] = dead
        }
        environment["no_proxy"] = ""
        environment["NO_PROXY"] = ""
        let printed = try tether(group.withGroup(["token", "print"]), environment: environment)
        #expect(printed.status == 0, "\(printed.stderr)")
        #expect(!printed.stdout.isEmpty)
        #expect(try server.counters()["refreshes"] == 1)
    }
}
