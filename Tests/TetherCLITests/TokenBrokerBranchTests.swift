import Foundation
import Testing
import TetherTestSupport

/// Branches of the refresh broker the other token tests do not reach.
@Suite(.timed) struct TokenBrokerBranchTests {
    /// With a slow server, the processes truly overlap: every task in every
    /// process waits on the one refresh in flight, and one refresh serves all.
    @Test func aSlowRefreshIsSharedByEveryOverlappingProcess() throws {
        let group = try TestGroup()
        let server = try DemoServer(in: group.dir)
        try server.loginExpired(group)
        try server.post("/admin/faults", ["latencyMs": 600, "latencyCount": 1])
        let reports = try group.storm(processes: 4, tasks: 16)
        let tokens = Set(reports.flatMap { $0["tokens"] as? [String] ?? [] })
        let shortestWait = reports.compactMap { ($0["waitsMs"] as? [Double])?.first }.min() ?? 0
        #expect(tokens.count == 1 && tokens.allSatisfy { !$0.hasPrefix("error") }, "\(tokens)")
        // Each task waited for the slow answer: the processes overlapped it.
        #expect(shortestWait >= 400, "the fastest task took \(shortestWait) ms")
        let counters = try server.counters()
        #expect(counters["refreshes"] == 1 && counters["reuseDetected"] == 0, "\(counters)")
    }

    /// invalid_grant, but meanwhile a writer outside the refresh lock (an
    /// older tool, another host) stored a different, valid pair: the broker
    /// re-reads and uses it rather than ending the session.
    @Test(.waits) func invalidGrantAfterAnotherWriterStoredAValidPairKeepsTheSession() throws {
        let group = try TestGroup()
        let server = try DemoServer(in: group.dir)
        try server.loginExpired(group)
        // Elsewhere, the same refresh token is used once: ours is now a reused one.
        let elsewhere = try TestGroup()
        #expect(try elsewhere.run(["defaults", "list"]).status == 0)  // makes the directory
        try elsewhere.makeSecrets()
        try FileManager.default.copyItem(atPath: group.credentialsPath,
                                         toPath: elsewhere.credentialsPath)
        #expect(try elsewhere.run(["token", "print"]).status == 0)
        try server.waitForLine("token request: refresh_token")
        // A valid pair of another session, to be stored by the outside writer.
        let other = try TestGroup()
        #expect(try server.login(other).status == 0)
        let otherUser = try #require(try stored(other)["user"])

        // Our refresh will be refused (reuse), and the refusal is slow to arrive.
        try server.post("/admin/faults", ["latencyMs": 2_000, "latencyCount": 1])
        let printer = try group.start(["token", "print"])
        try server.waitForLine("token request: refresh_token")
        // While it is on its way, the outside writer stores its pair.
        var credentials = try stored(group)
        credentials["user"] = otherUser
        let replacement = group.secrets + "/credentials.json.outside"
        try writeFile(replacement, String(decoding: try JSONSerialization.data(withJSONObject: credentials), as: UTF8.self),
                      mode: 0o600)
        #expect(rename(replacement, group.credentialsPath) == 0)

        let exit = try printer.waitForExit(timeout: 30)
        let errors = try printer.standardError()
        #expect(exit == 0, "\(errors)")
        let token = try printer.remainingOutput().trimmingCharacters(in: .newlines)
        #expect(token == (otherUser as? [String: Any])?["accessToken"] as? String, "the stored pair was used")
        #expect(try server.counters()["reuseDetected"] == 1, "our refresh was indeed refused")
        let status = try group.json(try group.run(["token", "status", "--json"]))
        #expect(status["state"] as? String == "userAuthenticated", "the session was not ended")
    }

    func stored(_ group: TestGroup) throws -> [String: Any] {
        let data = try #require(FileManager.default.contents(atPath: group.credentialsPath))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}
