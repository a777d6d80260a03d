import Foundation
import Testing
import TetherTestSupport

/// `tether login --style json` against the courier app's own kind of
/// backend (FastAPI, rotating refresh tokens, 401 on reuse), in real
/// processes: the refresh core is the OAuth one, only the requests differ.
@Suite(.timed) struct JSONStyleLoginTests {
    /// A group logged in to a courier backend of its own, its access token already expired.
    func loggedInExpired() throws -> (TestGroup, CourierBackend) {
        let group = try TestGroup()
        let backend = try CourierBackend(in: group.dir)
        try backend.loginExpired(group)
        return (group, backend)
    }

    @Test func loginStatusAndPrintWithTheCourierBackend() throws {
        let group = try TestGroup()
        let backend = try CourierBackend(in: group.dir)
        let wrong = try backend.login(group, password: "not-" + backend.password)
        #expect(wrong.status == 1)
        #expect(wrong.stderr.contains("refused the user name or password (HTTP 401 or 403)"), "\(wrong.stderr)")

        let login = try backend.login(group)
        #expect(login.status == 0, "\(login.stderr)")
        #expect(login.stdout.contains("logged in as courier: userAuthenticated"))
        let status = try group.json(try group.run(["token", "status", "--json"]))
        #expect(status["state"] as? String == "userAuthenticated")
        #expect(status["style"] as? String == "json")
        #expect(status["tokenURL"] as? String == backend.loginURL)
        #expect(status["refreshURL"] as? String == backend.refreshURL)
        #expect((status["user"] as? [String: Any])?["subject"] as? String == "courier")
        let text = try group.run(["token", "status"]).stdout
        #expect(text.contains("json style") && text.contains("refresh endpoint: \(backend.refreshURL)"), "\(text)")

        let printed = try group.run(["token", "print"]).stdout.trimmingCharacters(in: .newlines)
        #expect(printed.split(separator: ".").count == 3, "a JWT")
        let counters = try backend.counters()
        #expect(counters["logins"] == 1 && counters["loginFailures"] == 1 && counters["refreshes"] == 0)
    }

    /// Sixteen processes at each of three expiries: one refresh each time,
    /// no rotated token ever presented again.
    @Test func sixteenProcessesAcrossThreeExpiriesRefreshThreeTimes() throws {
        let group = try TestGroup()
        let backend = try CourierBackend(in: group.dir)
        // Tokens live 4 s; with no leeway each is due when it expires.
        try backend.loginExpired(group, ttl: 4)
        try group.stormsAcrossThreeExpiries(refreshes: { try backend.counters()["refreshes"] })
        let counters = try backend.counters()
        #expect(counters["reuseDetected"] == 0 && counters["rejections"] == 0, "\(counters)")
    }

    /// 503s keep everything; a revoked family (401) ends the session in
    /// every process, after one refresh attempt, and no output holds a secret.
    @Test func outagesKeepTheSessionAndARevokedFamilyEndsItEverywhere() throws {
        let (group, backend) = try loggedInExpired()
        let (accessToken, refreshToken) = try group.storedTokens()
        var outputs: [String] = []
        // The state, from `token status --json`; both status forms join the
        // secret scan, here while the tokens are stored.
        func state() throws -> String? {
            let json = try group.run(["token", "status", "--json"])
            let text = try group.run(["token", "status"])
            outputs += [json.stdout, json.stderr, text.stdout, text.stderr]
            return try group.json(json)["state"] as? String
        }

        try backend.post("/admin/faults", ["status": 503, "count": 100])
        let failed = try group.run(["token", "print"])
        outputs += [failed.stdout, failed.stderr]
        #expect(failed.status == 3)
        #expect(failed.stderr.contains("HTTP 503") && failed.stderr.contains("nothing was lost"), "\(failed.stderr)")
        let afterOutage = try state()
        #expect(afterOutage == "userAuthenticated")
        #expect(try String(contentsOfFile: group.credentialsPath, encoding: .utf8).contains(refreshToken))

        // A firewall's 403 page in between says nothing about the session.
        try backend.post("/admin/faults", ["status": 403, "count": 1, "html": 1])
        let forbidden = try group.run(["token", "print"])
        outputs += [forbidden.stdout, forbidden.stderr]
        #expect(forbidden.status != 0 && !forbidden.stderr.contains("session has ended"), "\(forbidden.stderr)")
        let afterProxy = try state()
        #expect(afterProxy == "userAuthenticated")

        try backend.post("/admin/faults", ["count": 0])
        try backend.post("/admin/revoke", [:])
        let reports = try group.storm(processes: 4, tasks: 8)
        let outcomes = Set(reports.flatMap { $0["tokens"] as? [String] ?? [] })
        #expect(outcomes.count == 1 && outcomes.first?.contains("the session has ended") == true, "\(outcomes)")
        #expect(try backend.counters()["rejections"] == 1, "one refresh attempt, then every process reads the ended session")
        let afterRevocation = try state()
        #expect(afterRevocation == "notAuthenticated")
        let ended = try group.run(["token", "print"])
        #expect(ended.status == 1)
        outputs += [ended.stdout, ended.stderr]
        outputs.append(try String(contentsOfFile: group.credentialsPath, encoding: .utf8))
        let all = outputs.joined(separator: "\n") + reports.map { "\($0)" }.joined()
        for secret in [backend.password, refreshToken, accessToken] {
            #expect(!all.contains(secret))
        }
    }

    /// The backend's own 403 (a JSON body, unlike a proxy's page) ends the
    /// session as a 401 does, and no output holds a secret.
    @Test func theBackendsOwn403EndsTheSession() throws {
        let (group, backend) = try loggedInExpired()
        let (accessToken, refreshToken) = try group.storedTokens()
        var outputs: [String] = []
        let before = try group.run(["token", "status", "--json"])
        outputs += [before.stdout, before.stderr]
        #expect(try group.json(before)["state"] as? String == "userAuthenticated")

        // The stored token has expired, so this read refreshes; the backend's 403 answers.
        try backend.post("/admin/faults", ["status": 403, "count": 1, "html": 0])
        let forbidden = try group.run(["token", "print"])
        outputs += [forbidden.stdout, forbidden.stderr]
        #expect(forbidden.status == 1 && forbidden.stderr.contains("the session has ended"), "\(forbidden.stderr)")
        let counters = try backend.counters()
        #expect(counters["unavailable"] == 1 && counters["refreshes"] == 0, "the 403 answered the one refresh: \(counters)")

        let after = try group.run(["token", "status", "--json"])
        let text = try group.run(["token", "status"])
        outputs += [after.stdout, after.stderr, text.stdout, text.stderr]
        #expect(try group.json(after)["state"] as? String == "notAuthenticated")
        let ended = try group.run(["token", "print"])
        outputs += [ended.stdout, ended.stderr]
        #expect(ended.status == 1)
        outputs.append(try String(contentsOfFile: group.credentialsPath, encoding: .utf8))
        let all = outputs.joined(separator: "\n")
        for secret in [backend.password, refreshToken, accessToken] {
            #expect(!all.contains(secret))
        }
    }

    /// Credentials never travel in clear: plain http:// to another host is
    /// refused before any request, unless the user allows it.
    @Test func plainHTTPToAnotherHostIsRefusedUnlessAllowed() throws {
        let group = try TestGroup()
        // TEST-NET-1 (RFC 5737): nothing answers there, so only a refusal is quick.
        let remote = "http://192.0.2.1:9/v1/auth/login_password"
        for style in [["--style", "json"], ["--client-id", "c"]] {
            let refused = try group.start(["login"] + style + ["--token-url", remote, "--username", "u", "--password-stdin"])
            refused.writeStdin("pw\n")
            refused.closeStdin()
            #expect(try refused.waitForExit(timeout: 10) == 2)
            let error = try refused.standardError()
            #expect(error.contains("refusing to send credentials in clear to http://192.0.2.1:9"), "\(error)")
        }
        let refreshElsewhere = try group.run(["login", "--style", "json", "--token-url", "http://127.0.0.1:9/login",
                                              "--refresh-url", "http://example.com/refresh", "--username", "u", "--password-stdin"])
        #expect(refreshElsewhere.status == 2 && refreshElsewhere.stderr.contains("http://example.com"))
        for fields in [["--username-field", "x", "--password-field", "x"], ["--username-field", "password"], ["--password-field", " "]] {
            let same = try group.run(["login", "--style", "json", "--token-url", "http://127.0.0.1:9/login"] + fields
                                     + ["--username", "u", "--password-stdin"])
            #expect(same.status == 2 && same.stderr.contains("field"), "\(fields): \(same.stderr)")
        }
        // Allowed: it is tried (0.0.0.0 is this machine, which refuses at once: exit 3, not 2).
        let allowed = try group.start(["login", "--style", "json", "--token-url", "http://0.0.0.0:9/login", "--insecure-http",
                                       "--username", "u", "--password-stdin"])
        allowed.writeStdin("pw\n")
        allowed.closeStdin()
        #expect(try allowed.waitForExit(timeout: 30) == 3)
        #expect(try group.json(try group.run(["token", "status", "--json"]))["state"] as? String == "notAuthenticated")
    }
}
