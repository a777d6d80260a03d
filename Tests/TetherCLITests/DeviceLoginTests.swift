import Foundation
import Testing
import TetherGroup
import TetherTestSupport

/// The device authorization grant (RFC 8628), revocation at logout (RFC
/// 7009) and endpoint discovery (RFC 8414 / OIDC), against the demo auth
/// server: real processes, a real HTTP server.
@Suite(.timed) struct DeviceLoginTests {
    static let devicePoll = "token request: urn:ietf:params:oauth:grant-type:device_code"

    /// Starts `tether login --device` and returns it with the user code it printed.
    func startDeviceLogin(_ group: TestGroup, _ server: DemoServer, _ endpoints: [String]) throws -> (TestProcess, String) {
        let login = try group.start(["login", "--device", "--client-id", "tether-demo", "--client-secret-file", server.secretFile]
                                    + endpoints)
        let prompt = try #require(try login.readLine(timeout: 20))
        #expect(prompt.hasPrefix("To sign in, open \(server.baseURL)/device and enter the code "), "\(prompt)")
        let code = String(try #require(prompt.split(separator: " ").last))
        #expect(code.wholeMatch(of: /[B-Z]{4}-[B-Z]{4}/) != nil, "\(code)")
        return (login, code)
    }

    /// Pending, then slow_down (honoured: 5 s more between polls, as the
    /// server checks), then approval: logged in as the approving user, with
    /// the endpoints found by discovery stored and shown.
    @Test(.waits) func aDeviceLoginWaitsThroughPendingAndSlowDownUntilApproved() throws {
        let group = try TestGroup()
        let server = try DemoServer(in: group.dir)
        try server.post("/admin/settings", ["deviceInterval": 1])
        let (login, code) = try startDeviceLogin(group, server, ["--issuer", server.baseURL])
        try login.expectLine("(or open \(server.baseURL)/device?user_code=\(code))")
        // The server says a poll arrived before it answers it: counted by the next poll at the latest.
        try server.waitForLine(Self.devicePoll)
        for _ in 0..<10 where try server.counters()["pendingAnswers"] ?? 0 < 1 { try server.waitForLine(Self.devicePoll) }
        #expect(try server.counters()["pendingAnswers"] ?? 0 >= 1)
        try server.post("/admin/faults", ["slowDownCount": 1])
        for _ in 0..<10 where try server.counters()["slowDowns"] != 1 { try server.waitForLine(Self.devicePoll) }
        #expect(try server.counters()["slowDowns"] == 1)
        try server.postForm("/device", ["user_code": code, "username": "alice", "password": server.password, "action": "approve"])
        #expect(try login.waitForExit(timeout: 30) == 0)
        #expect(try login.remainingOutput().contains("logged in as alice: userAuthenticated"))
        let counters = try server.counters()
        #expect(counters["deviceGrants"] == 1 && counters["pollsTooFast"] == 0, "\(counters)")

        let status = try group.json(try group.run(["token", "status", "--json"]))
        #expect(status["state"] as? String == "userAuthenticated")
        #expect(status["issuer"] as? String == server.baseURL && status["tokenURL"] as? String == server.tokenURL)
        #expect(status["deviceURL"] as? String == server.baseURL + "/device_authorization")
        #expect(status["revokeURL"] as? String == server.baseURL + "/revoke")
        #expect((status["user"] as? [String: Any])?["subject"] as? String == "alice")
        #expect(try group.run(["token", "print"]).status == 0)
    }

    /// A code nobody approves in time, and one the user denies: exit 1 with
    /// a sentence, and no session.
    @Test(.waits) func anExpiredOrDeniedDeviceLoginEndsWithoutASession() throws {
        let group = try TestGroup()
        let server = try DemoServer(in: group.dir)
        let endpoints = ["--token-url", server.tokenURL, "--device-url", server.baseURL + "/device_authorization"]
        try server.post("/admin/settings", ["deviceInterval": 1, "deviceExpiresIn": 2])
        let (expiring, _) = try startDeviceLogin(group, server, endpoints)
        #expect(try expiring.waitForExit(timeout: 30) == 1)
        #expect(try expiring.standardError().contains("the code expired before it was approved"))

        try server.post("/admin/settings", ["deviceExpiresIn": 600])
        let (denied, code) = try startDeviceLogin(group, server, endpoints)
        try server.postForm("/device", ["user_code": code, "action": "deny"])
        #expect(try denied.waitForExit(timeout: 30) == 1)
        #expect(try denied.standardError().contains("the sign-in was denied"))
        #expect(try group.json(try group.run(["token", "status", "--json"]))["state"] as? String == "notAuthenticated")
        #expect(try server.counters()["deviceGrants"] == 0)
    }

    /// Logout revokes the refresh token where an endpoint is known (the
    /// server's counter and its dead family prove it); a server that is gone
    /// or never answers costs a warning, and the local session ends anyway.
    @Test func logoutRevokesAtTheServerAndEndsTheSessionEvenWhenItCannot() throws {
        let group = try TestGroup()
        let server = try DemoServer(in: group.dir)
        #expect(try server.login(group, extra: ["--revoke-url", server.baseURL + "/revoke"]).status == 0)
        let credentials = try String(contentsOfFile: group.credentialsPath, encoding: .utf8)
        let refreshToken = String(try #require(credentials.firstMatch(of: /"refreshToken":"([^"]+)"/)?.output.1))
        let logout = try group.run(["logout"])
        #expect(logout.status == 0 && logout.stdout.contains("logged out: clientAuthenticated"), "\(logout.stderr)")
        #expect(logout.stdout.contains("revoked the refresh token at \(server.baseURL)"), "\(logout.stdout)")
        #expect(try server.counters()["revocations"] == 1)
        #expect(try server.counters()["familiesRevoked"] == 1)
        #expect(!(logout.stdout + logout.stderr).contains(refreshToken))

        // --revoke-url follows login's transport rule: plain http:// elsewhere
        // is bad usage, refused before the session is touched.
        #expect(try server.login(group).status == 0)
        let clear = try group.run(["logout", "--revoke-url", "http://example.invalid/revoke"])
        #expect(clear.status == 2 && clear.stderr.contains("refusing to send credentials in clear to http://example.invalid"),
                "\(clear.stderr)")
        #expect(try group.json(try group.run(["token", "status", "--json"]))["state"] as? String == "userAuthenticated")
        // Allowed: it is tried (0.0.0.0 is this machine, which refuses at once), and the session ends.
        let allowed = try group.run(["logout", "--revoke-url", "http://0.0.0.0:9/revoke", "--insecure-http", "--revoke-timeout", "5"])
        #expect(allowed.status == 0 && allowed.stderr.contains("warning: the server did not confirm the revocation")
                && !allowed.stderr.contains("refusing to send credentials"), "\(allowed.stderr)")
        #expect(try group.json(try group.run(["token", "status", "--json"]))["state"] as? String == "clientAuthenticated")

        // A server that accepts the connection and never answers: the timeout, then a warning.
        let silent = try LoopbackSocket(listening: true)
        #expect(try server.login(group).status == 0)
        let hung = try group.start(["logout", "--revoke-url", "http://127.0.0.1:\(silent.port)/revoke", "--revoke-timeout", "1"])
        #expect(try hung.waitForExit(timeout: 20) == 0)
        #expect(try hung.standardError().contains("warning: the server did not confirm the revocation"))
        #expect(try group.json(try group.run(["token", "status", "--json"]))["state"] as? String == "clientAuthenticated")

        // A server that is gone.
        #expect(try server.login(group, extra: ["--revoke-url", server.baseURL + "/revoke"]).status == 0)
        server.process.signal(SIGKILL)
        _ = try server.process.waitForExit(timeout: 10)
        let offline = try group.run(["logout"])
        #expect(offline.status == 0 && offline.stderr.contains("warning:") && offline.stdout.contains("logged out"), "\(offline.stderr)")
        #expect(try group.json(try group.run(["token", "status", "--json"]))["state"] as? String == "clientAuthenticated")
    }

    /// RFC 8414's document, else OpenID Connect's; a document naming another
    /// issuer, or sending credentials in clear elsewhere, is refused and
    /// nothing is stored.
    @Test func discoveryFallsBackToOpenIDConnectAndRefusesImpostors() throws {
        let group = try TestGroup()
        let server = try DemoServer(in: group.dir)
        try server.post("/admin/settings", ["oauthMetadata": 0])
        #expect(try server.login(group, extra: ["--issuer", server.baseURL]).status == 0)
        #expect(try group.json(try group.run(["token", "status", "--json"]))["revokeURL"] as? String == server.baseURL + "/revoke")

        let other = try TestGroup()
        for (document, expected) in [
            (#"{"issuer": "https://auth.example.com", "token_endpoint": "https://auth.example.com/token"}"#,
             "names another issuer"),
            (#"{"issuer": "ISSUER", "token_endpoint": "http://192.0.2.1/token"}"#, "refusing to send credentials in clear"),
            (#"["not", "an", "object"]"#, "not a JSON object"),
            (#"{"issuer": "ISSUER", "token_endpoint": "http://127.0.0.1:1/t\u001b[2Jx"}"#, "has an endpoint that is not a plain URL"),
        ] {
            let impostor = try StaticJSONServer(document)
            let issuer = "http://127.0.0.1:\(impostor.port)"
            impostor.document = document.replacingOccurrences(of: "ISSUER", with: issuer)
            let login = try other.start(["login", "--issuer", issuer, "--client-id", "c", "--username", "u", "--password-stdin"])
            login.writeStdin("pw\n")
            login.closeStdin()
            #expect(try login.waitForExit(timeout: 20) == 3)
            #expect(try login.standardError().contains(expected))
            #expect(try other.json(try other.run(["token", "status", "--json"]))["state"] as? String == "notAuthenticated")
        }
    }
}

/// One fixed JSON document at every path, from Python's standard library.
final class StaticJSONServer {
    let process: TestProcess
    let port: Int
    private let file: String

    var document: String {
        get { (try? String(contentsOfFile: file, encoding: .utf8)) ?? "" }
        set { try? replaceFile(file, newValue) }
    }

    init(_ document: String) throws {
        file = NSTemporaryDirectory() + "/tether-static-\(UUID().uuidString).json"
        try replaceFile(file, document)
        process = try TestProcess("/usr/bin/env", ["python3", "-c", Self.source, file])
        guard let line = try process.readLine(timeout: 20), let port = Int(line) else {
            throw TestTimeout(what: "the static JSON server to listen")
        }
        self.port = port
    }

    deinit {
        process.signal(SIGKILL)
        unlink(file)
    }

    static let source = #"""
        import http.server, sys
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = open(sys.argv[1], "rb").read()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            def log_message(self, *args):
                pass
        server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """#
}

/// One user's data stays theirs: logging in as someone else removes the
/// user-scoped keys and shared files (every process hears of it), and
/// keeps the rest. The rules (the same user again, who was last kept
/// through a logout) are `AuthSessionTests`'; here, the CLI's marks and
/// words, and another process told.
@Suite(.timed) struct UserSwitchTests {
    @Test func anotherUsersLoginClearsTheUserScopedDataAndKeepsTheRest() throws {
        let group = try TestGroup()
        let server = try DemoServer(in: group.dir)
        #expect(try server.login(group).status == 0)
        #expect(try group.run(["defaults", "set", "--user-scoped", "orders", #"["1041"]"#]).status == 0)
        #expect(try group.run(["defaults", "set", "theme", #""dark""#]).status == 0)
        let directory = try GroupDirectory(path: group.path)
        try FileManager.default.createDirectory(atPath: group.path + "/shared", withIntermediateDirectories: true)
        try writeFile(group.path + "/shared/inbox", "alice's messages")
        try writeFile(group.path + "/shared/logo", "the app's")
        try UserScopedData(group: directory).markFile("inbox")

        let watch = try group.start(["defaults", "watch", "--json"])
        defer { watch.signal(SIGTERM) }
        // It says when it watches; a change before that would be missed.
        try watch.expectLine(#"{"watching":true}"#, timeout: 20)

        let bob = try server.login(group, as: "bob")
        #expect(bob.status == 0 && bob.stdout.contains("removed 1 user-scoped key(s) and 1 shared file(s)"), "\(bob.stdout)")
        try watch.expectLine(#"{"changed":["orders"]}"#, timeout: 20)
        #expect(try group.run(["defaults", "get", "orders"]).status == 1)
        #expect(try group.run(["defaults", "get", "theme"]).stdout == "\"dark\"\n")
        #expect(!FileManager.default.fileExists(atPath: group.path + "/shared/inbox"))
        #expect(FileManager.default.fileExists(atPath: group.path + "/shared/logo"))
        #expect((try group.json(try group.run(["token", "status", "--json"]))["user"] as? [String: Any])?["subject"] as? String == "bob")
    }

    /// The SDK's marks (`setUserScoped`, `write(userScoped: true)`) go the
    /// same way as the CLI's; what it wrote unmarked stays.
    @Test func theSDKsUserScopedDataGoesWithAnotherUsersLogin() throws {
        let group = try TestGroup()
        let server = try DemoServer(in: group.dir)
        #expect(try server.login(group).status == 0)
        // Open access: a keyboard without it may not write the group.
        let keyboard = try TestProcess(exampleExecutable("SDKFixture"),
                                       ["user-data-keyboard", "--group", group.path, "--name", "user-data"],
                                       environment: ["TETHER_OPEN_ACCESS": "1"])
        defer { keyboard.stopAlways() }
        keyboard.writeStdin("write\n")
        try keyboard.expectLine("wrote user data", timeout: 20)
        keyboard.closeStdin()
        #expect(try keyboard.waitForExit(timeout: 20) == 0, "a keyboard started by hand ends with its input")
        #expect(try group.run(["defaults", "get", "orders"]).stdout == "[\"1041\"]\n")
        #expect(FileManager.default.fileExists(atPath: group.path + "/shared/inbox"))

        let bob = try server.login(group, as: "bob")
        #expect(bob.status == 0 && bob.stdout.contains("removed 1 user-scoped key(s) and 1 shared file(s)"), "\(bob.stdout)")
        #expect(try group.run(["defaults", "get", "orders"]).status == 1)
        #expect(try group.run(["defaults", "get", "theme"]).stdout == "\"dark\"\n")
        #expect(!FileManager.default.fileExists(atPath: group.path + "/shared/inbox"))
        #expect(FileManager.default.fileExists(atPath: group.path + "/shared/logo"))
    }
}
