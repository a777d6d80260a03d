import Foundation
import Testing
import TetherTestSupport

/// `login --store keyring` against a real Secret Service (GNOME Keyring on
/// a session bus of the test's own) and the demo auth server.
@Suite(.timed) struct KeyringTests {
    /// A group using `service`, and the demo server.
    func keyringGroup(_ service: SecretService, accessTTL: Double = 3600) throws -> (TestGroup, DemoServer) {
        var group = try TestGroup()
        group.environment = service.environment
        return (group, try DemoServer(in: group.dir, accessTTL: accessTTL))
    }

    /// Every file under the group and its secrets directory, as text.
    func everythingStored(_ group: TestGroup) throws -> String {
        let found = try runCommand("/usr/bin/find", [group.path, group.secrets, "-type", "f"]).stdout.split(separator: "\n")
        return try found.map { try String(contentsOfFile: String($0), encoding: .isoLatin1) }.joined(separator: "\n")
    }

    /// The attributes of the group's item: its ID (from the credentials
    /// file, new with each login), the secret and the account.
    func item(_ group: TestGroup, _ secret: String, _ account: String) throws -> [String: String] {
        let stored = try group.json(CommandResult(status: 0, stdout: try String(contentsOfFile: group.credentialsPath, encoding: .utf8),
                                                  stderr: ""))
        return ["group": try #require(stored["keyringGroup"] as? String), "secret": secret, "account": account]
    }

    /// A keyring login whose access token has expired, and the credentials
    /// file as it was then.
    func expiredKeyringLogin() throws -> (SecretService, TestGroup, DemoServer, String) {
        let service = try SecretService()
        let (group, server) = try keyringGroup(service)
        try server.loginExpired(group, extra: ["--store", "keyring"])
        return (service, group, server, try String(contentsOfFile: group.credentialsPath, encoding: .utf8))
    }

    /// A host's fixture whose group keeps its secrets in `service`, logged
    /// in with an access token that has expired, and the demo server.
    func expiredKeyringHost(_ service: SecretService) throws -> (HostFixture, TestGroup, DemoServer) {
        let fixture = try HostFixture()
        var group = fixture.group
        group.environment = service.environment
        let server = try DemoServer(in: group.dir)
        try server.loginExpired(group, extra: ["--store", "keyring"])
        return (fixture, group, server)
    }

    /// `token print` succeeds, and the server has seen `refreshes` refreshes
    /// in all, none with a token used before.
    func expectTokenPrinted(_ group: TestGroup, _ server: DemoServer, refreshes: Int) throws {
        let printed = try group.run(["token", "print"])
        #expect(printed.status == 0, "\(printed.stderr)")
        let counters = try server.counters()
        #expect(counters["refreshes"] == refreshes && counters["reuseDetected"] == 0, "\(counters)")
    }

    /// Every Tether item in the keyring, as secret-tool lists them.
    func allItems(_ service: SecretService) throws -> String {
        try service.search(["xdg:schema": "org.tether.Credential"])
    }

    @Test func theKeyringHoldsTheSecretsAndLogoutRemovesTheUsers() throws {
        let service = try SecretService()
        let (group, server) = try keyringGroup(service)
        let login = try server.login(group, extra: ["--store", "keyring"])
        #expect(login.status == 0, "\(login.stderr)")
        let refreshToken = try #require(try service.lookup(item(group, "refresh-token.user", "alice")))
        #expect(try service.lookup(item(group, "client-secret", "tether-demo")) == server.clientSecret)
        let stored = try everythingStored(group)
        #expect(!stored.contains(refreshToken) && !stored.contains(server.clientSecret), "a secret is in the group's files")
        #expect(stored.contains(#""secretStore":"keyring""#))
        let status = try group.json(try group.run(["token", "status", "--json"]))
        #expect(status["secretStore"] as? String == "keyring")
        #expect((status["user"] as? [String: Any])?["refreshable"] as? Bool == true)
        #expect(try group.run(["token", "status"]).stdout.contains("secrets kept in: the keyring"))

        let logout = try group.run(["logout", "--revoke-url", server.baseURL + "/revoke"])
        #expect(logout.status == 0 && logout.stdout.contains("revoked the refresh token"), "\(logout)")
        #expect(try service.lookup(item(group, "refresh-token.user", "alice")) == nil, "logout leaves the refresh token")
        #expect(try service.lookup(item(group, "client-secret", "tether-demo")) == server.clientSecret, "the client keeps its secret")
    }

    /// Sixteen processes at each of three expiries: one refresh each time
    /// (the re-read after the lock reads the keyring), no token reused.
    @Test func sixteenProcessesAcrossThreeExpiriesRefreshThreeTimes() throws {
        let service = try SecretService()
        let (group, server) = try keyringGroup(service, accessTTL: 4)
        try server.post("/admin/settings", ["accessTTL": -5])
        #expect(try server.login(group, extra: ["--store", "keyring"]).status == 0)
        try server.post("/admin/settings", ["accessTTL": 4])
        var refreshTokens: Set<String> = []
        try group.stormsAcrossThreeExpiries(refreshes: { try server.counters()["refreshes"] }) { _ in
            refreshTokens.insert(try #require(try service.lookup(item(group, "refresh-token.user", "alice"))))
        }
        #expect(refreshTokens.count == 3, "each refresh replaced the keyring's item")
        let counters = try server.counters()
        #expect(counters["reuseDetected"] == 0 && counters["rejections"] == 0, "\(counters)")
        let stored = try everythingStored(group)
        #expect(refreshTokens.allSatisfy { !stored.contains($0) }, "a refresh token reached the group's files")
    }

    /// Tokens that arrive already expired: every process of the storm must
    /// refresh in turn, each with the refresh token stored when it takes the
    /// lock (read from the keyring then, not before), so none is reused.
    @Test func eachRefreshUsesTheRefreshTokenStoredWhenItTakesTheLock() throws {
        let service = try SecretService()
        let (group, server) = try keyringGroup(service)
        try server.loginExpired(group, extra: ["--store", "keyring"])
        try server.post("/admin/settings", ["accessTTL": -5])
        let reports = try group.storm(processes: 8, tasks: 1)
        let tokens = reports.flatMap { $0["tokens"] as? [String] ?? [] }
        #expect(tokens.count == 8 && !tokens.contains { $0.hasPrefix("error") }, "\(tokens)")
        let counters = try server.counters()
        #expect(counters["refreshes"] == 8 && counters["reuseDetected"] == 0, "\(counters)")
    }

    /// Locked, then gone, mid-session: a clear error, the server never
    /// asked, nothing lost or written elsewhere; back and unlocked (a new
    /// daemon, its items from disk), the refresh goes through.
    @Test func aLockedOrVanishedKeyringFailsClearlyAndLosesNothing() throws {
        let (service, group, server, before) = try expiredKeyringLogin()
        try service.lock()
        for state in ["locked", "gone"] {
            if state == "gone" { try service.stopKeyring() }
            let refused = try group.run(["token", "print"])
            #expect(refused.status == 3, "\(state): \(refused)")
            #expect(refused.stderr.contains("keyring") && refused.stderr.contains("nothing was lost")
                     && !refused.stderr.contains("log in again"), "\(state): \(refused.stderr)")
            if state == "locked" {
                #expect(refused.stderr.contains("it is locked"), "\(refused.stderr)")
                // A login that would keep its secrets there is refused before the server is asked.
                for store in [["--store", "keyring"], []] {
                    let login = try server.login(group, extra: store)
                    #expect(login.status == 3 && login.stderr.contains("nothing was changed"), "\(store): \(login)")
                }
                #expect(try server.counters()["passwordGrants"] == 1)
            }
            #expect(try server.counters()["refreshes"] == 0)
            #expect(try String(contentsOfFile: group.credentialsPath, encoding: .utf8) == before)
        }
        try service.startKeyring()
        try expectTokenPrinted(group, server, refreshes: 1)
    }

    /// Locked, with a prompter on the bus that would show the unlock dialog
    /// and that nobody answers (the user away from the screen): Tether
    /// never asks it. The refresh fails at once saying the keyring is
    /// locked, the server is never asked, nothing is lost, and the refresh
    /// lock is free (the next process is told the same, not that a refresh
    /// is stalled); a login is refused the same way.
    @Test func aLockedKeyringIsRefusedWithoutAPrompt() throws {
        let service = try SecretService()
        let (group, server) = try keyringGroup(service)
        try server.loginExpired(group, extra: ["--store", "keyring", "--timeout", "5"])
        let before = try String(contentsOfFile: group.credentialsPath, encoding: .utf8)
        try service.promptNobodyAnswers()
        try service.lock()
        for _ in 0..<2 {
            let refused = try group.run(["token", "print"], timeout: 20)
            #expect(refused.status == 3 && refused.stderr.contains("it is locked")
                     && refused.stderr.contains("nothing was lost"), "\(refused)")
        }
        let login = try server.login(group, extra: ["--store", "keyring"])
        #expect(login.status == 3 && login.stderr.contains("it is locked"), "\(login)")
        #expect(try server.counters()["refreshes"] == 0)
        #expect(try String(contentsOfFile: group.credentialsPath, encoding: .utf8) == before)
    }

    /// A keyring daemon that takes calls and never answers (SIGSTOP): the
    /// refresh fails once the locked check's two D-Bus calls have each
    /// waited their 25 s, not twice that (a timeout is an answer, never
    /// retried as a stale service), clearly, with the server never asked
    /// and nothing lost; once it answers again, the refresh goes through.
    @Test(.waits) func aStoppedKeyringCostsOneTimeoutAndLosesNothing() throws {
        let (service, group, server, before) = try expiredKeyringLogin()
        service.pauseKeyring()
        let started = Date()
        let refused = try group.run(["token", "print"], timeout: 120)
        let took = Date().timeIntervalSince(started)
        #expect(refused.status == 3 && refused.stderr.contains("keyring") && refused.stderr.contains("nothing was lost"),
                "\(refused)")
        #expect(took < 75, "\(took) s: the keyring was asked again after a timeout")
        #expect(try server.counters()["refreshes"] == 0)
        #expect(try String(contentsOfFile: group.credentialsPath, encoding: .utf8) == before)
        service.pauseKeyring(false)
        try expectTokenPrinted(group, server, refreshes: 1)
    }

    /// Locked while the server answers a refresh (it has rotated the token
    /// already): the new pair is never written anywhere else. This process
    /// keeps it, says so, and the file is as it was.
    @Test func aKeyringLockedDuringARefreshNeverSendsTheTokensToDisk() throws {
        let (service, group, server, before) = try expiredKeyringLogin()
        try server.post("/admin/faults", ["latencyMs": 1_500, "latencyCount": 1])
        let printing = try group.start(["token", "print"])
        try server.waitForLine("token request: refresh_token")
        try service.lock()
        #expect(try printing.waitForExit(timeout: 30) == 0)
        #expect(!(try printing.remainingOutput()).isEmpty, "the new token is printed")
        let warning = try printing.standardError()
        #expect(warning.contains("could not be saved") && warning.contains("keyring"), "\(warning)")
        #expect(try String(contentsOfFile: group.credentialsPath, encoding: .utf8) == before)
        #expect(try server.counters()["refreshes"] == 1)
    }

    /// A refresh writes the keyring, then the file: a process killed between
    /// the two (caught as its temp file appears) leaves the new refresh
    /// token where the next refresh reads it, so none is ever reused, and
    /// what it leaves on disk holds no secret.
    @Test func aRefreshKilledBetweenTheKeyringAndTheFileReusesNothing() throws {
        let (service, group, server, _) = try expiredKeyringLogin()
        try server.post("/admin/settings", ["accessTTL": -5])  // every read refreshes
        let watcher = try DirectoryWatcher(path: group.secrets)
        let deadline = TestTimeout.deadline(after: 60)
        var caught = 0, refreshTokens: Set<String> = []
        for _ in 0..<12 where Date() < deadline {
            watcher.drain()
            let killed = try group.start(["token", "print"])
            if watcher.waitForWriteStart(of: "credentials.json", timeoutMilliseconds: 10_000) { caught += 1 }
            killed.signal(SIGKILL)
            _ = try killed.waitForExit(timeout: 10)
            let next = try group.run(["token", "print"])
            #expect(next.status == 0, "\(next.stderr)")
            refreshTokens.insert(try #require(try service.lookup(item(group, "refresh-token.user", "alice"))))
        }
        #expect(caught > 0, "no refresh was caught writing the file")
        let counters = try server.counters()
        #expect(counters["reuseDetected"] == 0 && counters["rejections"] == 0, "\(counters)")
        let stored = try everythingStored(group)
        #expect(refreshTokens.allSatisfy { !stored.contains($0) }, "a refresh token reached the group's files")
    }

    /// A revoked session in a keyring group: one refresh attempt across
    /// every process, the ended session read by the rest, and the refused
    /// refresh token removed from the keyring (the client keeps its secret).
    @Test func aRevokedSessionEndsOnceAndLeavesTheKeyring() throws {
        let (service, group, server, _) = try expiredKeyringLogin()
        let refreshItem = try item(group, "refresh-token.user", "alice")
        #expect(try service.lookup(refreshItem) != nil)
        try server.post("/admin/revoke", [:])
        let outcomes = Set(try group.storm(processes: 4, tasks: 8).flatMap { $0["tokens"] as? [String] ?? [] })
        #expect(outcomes.count == 1 && outcomes.first?.contains("the session has ended") == true, "\(outcomes)")
        #expect(try server.counters()["rejections"] == 1, "one refresh attempt, then every process reads the ended session")
        #expect(try service.lookup(refreshItem) == nil, "the refused refresh token is left in the keyring")
        #expect(try service.lookup(item(group, "client-secret", "tether-demo")) == server.clientSecret)
        #expect(try group.json(try group.run(["token", "status", "--json"]))["state"] as? String == "clientAuthenticated")
    }

    /// A host's keyring locked while the server answers its refresh, then
    /// gone, then back: the new pair is served from memory (one refresh, the
    /// old token never sent again), never written to disk, and saved to the
    /// keyring once it answers; the host stops cleanly and a later process
    /// refreshes with what was saved.
    @Test func aHostKeepsThePairTheKeyringRefusedAndSavesItWhenItIsBack() throws {
        let service = try SecretService()
        let (fixture, group, server) = try expiredKeyringHost(service)
        let before = try String(contentsOfFile: group.credentialsPath, encoding: .utf8)
        let refreshItem = try item(group, "refresh-token.user", "alice")
        let original = try #require(try service.lookup(refreshItem))
        let host = try fixture.startHost(environment: service.environment)
        defer { host.signal(SIGKILL) }
        try server.post("/admin/faults", ["latencyMs": 1_500, "latencyCount": 1])
        let client = try fixture.rawClient()
        defer { client.close() }
        client.askForToken(id: 0)
        try server.waitForLine("token request: refresh_token")
        try service.lock()
        let token = try client.tokenAnswer()
        try host.waitForError(containing: "the credential store is failing")

        try service.stopKeyring()
        #expect(try client.tokenGet(id: 1) == token, "the kept pair is the answer while the keyring is gone")
        #expect(try String(contentsOfFile: group.credentialsPath, encoding: .utf8) == before)
        #expect(try server.counters()["refreshes"] == 1)

        // Back, unlocked: a token read once the retry is due saves the pair.
        try service.startKeyring()
        var saved: String?
        var id = 1
        try waitFor("the kept refresh token in the keyring", timeout: 30) {
            id += 1
            guard (try? client.tokenGet(id: id)) == token else { return false }
            saved = try? service.lookup(refreshItem)
            return saved != nil && saved != original
        }
        let kept = try #require(saved)
        #expect(!(try everythingStored(group)).contains(kept), "the refresh token reached the group's files")
        #expect(try host.stop() == 0, "the refresh lock was released")

        try group.expireStoredUser()
        try expectTokenPrinted(group, server, refreshes: 2)
    }

    /// A host outlives its session bus (a logout), and its next refresh
    /// reaches the keyring on the next bus (a login, at the same address):
    /// each use of the keyring connects anew, so no restart is needed.
    @Test func aHostOutlivesItsSessionBusAndReachesTheNext() throws {
        let service = try SecretService()
        let (fixture, group, server) = try expiredKeyringHost(service)
        let host = try fixture.startHost(environment: service.environment)
        defer { host.signal(SIGKILL) }
        let client = try fixture.rawClient()
        defer { client.close() }
        let first = try client.tokenGet(id: 1)
        try service.restartBus()
        #expect(try client.tokenGet(id: 2) == first, "the host outlived its bus")
        try group.expireStoredUser()
        #expect(try client.tokenGet(id: 3) != first, "refreshed through the new bus")
        let counters = try server.counters()
        #expect(counters["refreshes"] == 2 && counters["reuseDetected"] == 0, "\(counters)")
        #expect(try host.stop() == 0)
    }

    /// A login moves the secrets to the store it names and leaves no copy in the other.
    @Test func loginMovesTheSecretsBetweenTheStores() throws {
        let service = try SecretService()
        let (group, server) = try keyringGroup(service)
        #expect(try server.login(group, extra: ["--store", "file"]).status == 0)
        let (_, inFile) = try group.storedTokens()
        #expect(try allItems(service).isEmpty)

        #expect(try server.login(group, extra: ["--store", "keyring"]).status == 0)
        let refreshItem = try item(group, "refresh-token.user", "alice"), secretItem = try item(group, "client-secret", "tether-demo")
        let inKeyring = try #require(try service.lookup(refreshItem))
        let stored = try everythingStored(group)
        #expect(!stored.contains(inKeyring) && !stored.contains(inFile) && !stored.contains(server.clientSecret))

        #expect(try server.login(group, extra: ["--store", "file"]).status == 0)
        #expect(try service.lookup(refreshItem) == nil && service.lookup(secretItem) == nil)
        #expect(try allItems(service).isEmpty, "nothing of the group is left in the keyring")
        #expect(try String(contentsOfFile: group.credentialsPath, encoding: .utf8).contains(server.clientSecret))
    }

    /// Another user, then the client alone, in the keyring: each login's
    /// secrets replace all of the previous one's, whoever they were.
    @Test func anotherUserOrTheClientAloneLeaveNothingOfThePreviousLogin() throws {
        let service = try SecretService()
        let (group, server) = try keyringGroup(service)
        #expect(try server.login(group, extra: ["--store", "keyring"]).status == 0)
        let alice = try item(group, "refresh-token.user", "alice")
        let aliceToken = try #require(try service.lookup(alice))
        let bobLogin = try server.login(group, as: "bob", extra: ["--store", "keyring"])
        #expect(bobLogin.status == 0, "\(bobLogin.stderr)")
        #expect(try service.lookup(alice) == nil)
        #expect(try service.lookup(item(group, "refresh-token.user", "bob")) != nil)
        #expect(!(try allItems(service)).contains(aliceToken))

        let clientLogin = try group.run(["login", "--token-url", server.tokenURL, "--client-id", "tether-demo",
                                         "--client-secret-file", server.secretFile, "--client-credentials", "--store", "keyring"])
        #expect(clientLogin.status == 0, "\(clientLogin.stderr)")
        let items = try allItems(service)
        #expect(!items.contains("refresh-token.user") && items.contains("client-secret"), "\(items)")
    }

    /// No Secret Service: auto says so in one line and uses the file;
    /// keyring refuses before the server is asked, and writes nothing.
    @Test func withoutAKeyringAutoUsesTheFileAndKeyringRefuses() throws {
        let group = try TestGroup()
        let server = try DemoServer(in: group.dir)
        let refused = try server.login(group, extra: ["--store", "keyring"])
        #expect(refused.status == 3 && refused.stderr.contains("no keyring to keep the secrets in")
                 && refused.stderr.contains("no session bus"), "\(refused)")
        #expect(try server.counters()["passwordGrants"] == 0)
        #expect(!FileManager.default.fileExists(atPath: group.credentialsPath))

        let auto = try server.login(group)
        #expect(auto.status == 0, "\(auto.stderr)")
        #expect(auto.stderr.contains("no keyring answers on the session bus"), "\(auto.stderr)")
        #expect(try group.json(try group.run(["token", "status", "--json"]))["secretStore"] as? String == "file")
    }

    /// A launched keyboard (read-only, offline) is told no bus address and
    /// cannot reach the bus anyway: its Unix sockets are refused, so the
    /// keyring's secrets are out of its reach (it gets tokens from the host).
    @Test func aConfinedKeyboardCannotReachTheBus() throws {
        let service = try SecretService()
        let attributes = ["group": "/keyboard-test", "secret": "client-secret", "account": "tether-demo"]
        try service.store("keyboard-test-secret", attributes)
        #expect(try service.lookup(attributes) == "keyboard-test-secret", "the test itself reaches it")
        let fixture = try HostFixture()
        let lookup = attributes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: " ")
        try fixture.addExtension("kb", role: "keyboard", script: """
            echo "told: ${DBUS_SESSION_BUS_ADDRESS:-nothing}"
            python3 -c 'import socket, sys
            try:
                socket.socket(socket.AF_UNIX).connect(sys.argv[1]); print("bus: connected")
            except OSError as e:
                print("bus:", e.strerror)' '\(service.socketPath)'
            DBUS_SESSION_BUS_ADDRESS='\(service.address)' secret-tool lookup \(lookup); echo " lookup: $?"
            exec sleep 1000
            """)
        let host = try fixture.startHost(environment: service.environment)
        defer { host.signal(SIGKILL) }
        _ = try host.expectLineStarting("[kb] told: nothing")
        _ = try host.expectLineStarting("[kb] bus: Operation not permitted")
        let answer = try host.expectLineStarting("[kb]")
        #expect(answer.last?.hasSuffix("lookup: 1") == true && !answer.joined().contains("keyboard-test-secret"), "\(answer)")
    }
}
