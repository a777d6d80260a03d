import Foundation
import Testing
import TetherTestSupport

/// `login`, `logout`, `token` and the broker behind them, in real processes
/// against the demo auth server.
@Suite(.timed) struct TokenCommandTests {
    @Test func loginStatusPrintLogoutKeepsTheClientToken() throws {
        let group = try TestGroup()
        let server = try DemoServer(in: group.dir)
        #expect(try group.run(["token", "status", "--json"]).stdout.contains(#""state":"notAuthenticated""#))
        #expect(try group.run(["token", "print"]).status == 1)

        let login = try server.login(group)
        #expect(login.status == 0, "\(login.stderr)")
        #expect(login.stdout.contains("logged in as alice: userAuthenticated"))
        let status = try group.json(try group.run(["token", "status", "--json"]))
        #expect(status["state"] as? String == "userAuthenticated")
        #expect((status["user"] as? [String: Any])?["subject"] as? String == "alice")

        let printed = try group.run(["token", "print"])
        #expect(printed.status == 0)
        let token = printed.stdout.trimmingCharacters(in: .newlines)
        #expect(token.split(separator: ".", omittingEmptySubsequences: false).count == 3 && !token.contains(" "), "only the token is printed")

        #expect(try group.run(["logout"]).stdout.contains("logged out: clientAuthenticated"))
        #expect(try group.json(try group.run(["token", "status", "--json"]))["state"] as? String == "clientAuthenticated")
        let client = try group.run(["token", "print"])
        #expect(client.status == 0 && client.stdout.trimmingCharacters(in: .newlines) != token)
        #expect(try server.counters()["refreshes"] == 0)
    }

    @Test func manyProcessesAndTasksRefreshExactlyOnce() throws {
        let group = try TestGroup()
        let server = try DemoServer(in: group.dir)
        try server.loginExpired(group)
        let reports = try group.storm(processes: 8, tasks: 32)
        let tokens = Set(reports.flatMap { $0["tokens"] as? [String] ?? [] })
        #expect(tokens.count == 1, "every caller gets the same new token: \(tokens)")
        #expect(tokens.allSatisfy { !$0.hasPrefix("error") })
        let counters = try server.counters()
        #expect(counters["refreshes"] == 1 && counters["reuseDetected"] == 0, "\(counters)")
        #expect(counters["rejections"] == 0)
    }

    @Test func uncoordinatedClientsRefreshManyTimesAndTripReuseDetection() throws {
        // The baseline the broker is measured against: without the lock the
        // same storm rotates the token several times and the server revokes.
        let group = try TestGroup()
        let server = try DemoServer(in: group.dir)
        try server.loginExpired(group)
        let stormer = exampleExecutable("tether-bench-storm")
        let storms = try (0..<4).map { _ in
            try TestProcess(stormer, group.withGroup(["--tasks", "4", "--coordination", "none"]))
        }
        for storm in storms { try storm.expectLine("ready", timeout: 30) }
        for storm in storms { storm.writeStdin("go\n") }
        for storm in storms { try storm.waitForExit(timeout: 60) }
        #expect(try server.counters()["reuseDetected"] ?? 0 > 0)
    }

    @Test func killingTheRefreshLockHolderMidRefreshLetsAnotherProcessFinish() throws {
        let group = try TestGroup()
        // The grace period stands for a server's reuse interval: the killed
        // process's request rotated the token, but nobody saw the answer.
        let server = try DemoServer(in: group.dir, reuseGrace: 60)
        try server.loginExpired(group)
        try server.post("/admin/faults", ["latencyMs": 60_000, "latencyCount": 1])
        let holder = try group.start(["token", "print"])
        try server.waitForLine("token request: refresh_token")
        let waiter = try group.start(["token", "print"])
        holder.signal(SIGKILL)
        #expect(try holder.waitForExit() == 128 + SIGKILL)
        let waited = try waiter.waitForExit(timeout: 20)
        let errors = try waiter.standardError()
        #expect(waited == 0, "\(errors)")
        #expect(try waiter.remainingOutput().split(separator: ".", omittingEmptySubsequences: false).count == 3)
        let counters = try server.counters()
        #expect(counters["reuseDetected"] == 0)
        #expect(try group.json(try group.run(["token", "status", "--json"]))["state"] as? String == "userAuthenticated")
    }

    @Test func serverErrorsKeepTheCredentialsAndALaterRefreshSucceeds() throws {
        let group = try TestGroup()
        let server = try DemoServer(in: group.dir)
        try server.loginExpired(group)
        try server.post("/admin/faults", ["status": 503, "count": 100])
        let failed = try group.run(["token", "print"])
        #expect(failed.status == 3)
        #expect(failed.stderr.contains("nothing was lost"))
        #expect(failed.stdout.isEmpty)
        let status = try group.json(try group.run(["token", "status", "--json"]))
        #expect(status["state"] as? String == "userAuthenticated")
        #expect((status["user"] as? [String: Any])?["refreshable"] as? Bool == true)

        // Two more 503s are absorbed by the retries of one call.
        try server.post("/admin/faults", ["status": 503, "count": 2])
        let recovered = try group.run(["token", "print"])
        #expect(recovered.status == 0, "\(recovered.stderr)")
        #expect(try server.counters()["refreshes"] == 1)
    }

    @Test func invalidGrantEndsTheSessionInEveryProcessAndKeepsTheClientToken() throws {
        let group = try TestGroup()
        let server = try DemoServer(in: group.dir)
        try server.loginExpired(group)
        try server.post("/admin/revoke", [:])
        let reports = try group.storm(processes: 4, tasks: 8)
        let outcomes = Set(reports.flatMap { $0["tokens"] as? [String] ?? [] })
        #expect(outcomes.count == 1 && outcomes.first?.contains("the session has ended") == true, "\(outcomes)")
        let counters = try server.counters()
        #expect(counters["rejections"] == 1, "one refresh attempt, then every process reads the ended session")
        #expect(try group.json(try group.run(["token", "status", "--json"]))["state"] as? String == "clientAuthenticated")
        #expect(try group.run(["token", "print"]).status == 0, "the client token is kept")
        #expect(try group.run(["token", "print", "--kind", "user"]).status == 1)
    }

    @Test func noSecretAppearsInAnyOutputOrError() throws {
        let group = try TestGroup()
        let server = try DemoServer(in: group.dir)
        var outputs: [String] = []
        func run(_ arguments: [String]) throws {
            let result = try group.run(arguments)
            outputs += [result.stdout, result.stderr]
        }
        let login = try server.login(group)
        outputs += [login.stdout, login.stderr]
        // Printed on purpose, so kept out of `outputs`: no other command may show it.
        let printed = try group.run(["token", "print"])
        let accessToken = printed.stdout.trimmingCharacters(in: .newlines)
        try #require(printed.status == 0 && accessToken.split(separator: ".", omittingEmptySubsequences: false).count == 3)
        try run(["token", "status"])
        try run(["token", "status", "--json"])
        // Wrong password, wrong secret, no server: errors name no secret.
        let wrong = try group.start(["login", "--token-url", server.tokenURL, "--client-id", "tether-demo",
                                     "--client-secret-file", server.secretFile, "--username", "alice", "--password-stdin"])
        wrong.writeStdin("not-\(server.password)\n")
        wrong.closeStdin()
        #expect(try wrong.waitForExit() == 1)
        outputs += [try wrong.remainingOutput(), try wrong.standardError()]
        try server.loginExpired(group)
        try server.post("/admin/faults", ["status": 503, "count": 100])
        let credentials = try String(contentsOfFile: group.credentialsPath, encoding: .utf8)
        let refreshToken = try #require(credentials.firstMatch(of: /"refreshToken":"([^"]+)"/)?.output.1)
        // The expired session's access token (the user's or the client's: neither may show).
        let storedAccessToken = try #require(credentials.firstMatch(of: /"accessToken":"([^"]+)"/)?.output.1)
        try run(["token", "status", "--json"])
        try run(["token", "print"])
        server.process.signal(SIGTERM)
        try server.process.waitForExit()
        try run(["token", "print"])
        try run(["token", "status"])
        try run(["logout"])
        outputs.append(try server.process.remainingOutput())
        let all = outputs.joined(separator: "\n")
        #expect(all.contains("cannot reach the token server") && all.contains("HTTP 503") && all.contains("invalid_grant"),
                "the runs above reached the error paths")
        for secret in [server.password, server.clientSecret, String(refreshToken), accessToken, String(storedAccessToken)] {
            #expect(!all.contains(secret))
        }
        let mode = try FileManager.default.attributesOfItem(atPath: group.credentialsPath)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func concurrentUpsertsFromFourProcessesLoseNothing() throws {
        let group = try TestGroup()
        let writers = try (0..<4).map { index in
            try TestProcess(exampleExecutable("SDKFixture"), ["upsert-stress", "--prefix", "p\(index)", "--count", "250", "--group", group.path])
        }
        for writer in writers { try writer.expectLine("ready", timeout: 30) }
        for writer in writers { writer.writeStdin("go\n") }
        for writer in writers { #expect(try writer.waitForExit(timeout: 120) == 0) }
        let data = try Data(contentsOf: URL(fileURLWithPath: group.credentialsPath))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object.keys.filter { $0.hasPrefix("stress.") }.count == 1000)
    }
}
