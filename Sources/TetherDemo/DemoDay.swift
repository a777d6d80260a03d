import FoundationEssentials
import TetherAuth
import TetherGroup
import TetherJSON
import TetherLog
import TetherLoop
#if canImport(Glibc)
import Glibc
#endif

/// The scripted day `tether demo` plays, step by step, against real
/// processes: the demo auth server, a host on a fresh group with the example
/// widget and the on-demand notification extension, the example keyboard started by hand,
/// and tether commands as a user would type them.
final class DemoDay {
    static let steps = 11
    /// Expiry rounds, and who asks for a token in each besides the host and
    /// the extensions: this many `example-token-storm` processes of this many tasks.
    static let expiries = 3
    static let stormProcesses = 4, stormTasks = 16
    /// Token lifetimes: long enough for the morning's steps at login, then
    /// short, so the expiries come quickly.
    static let loginTTL = 10.0, shortTTL = 3.0
    /// The notification extension's idle timeout: short, so the demo sees it end.
    static let idleTimeout = 2.0

    let stage: DemoStage
    let say: DemoNarrator
    let bin: String
    let authServer: String
    let tether: String
    let group: String
    private let password = "demo-\(UUID().uuidString)"
    private var secretFile: String { stage.root + "/client-secret" }
    private var usersFile: String { stage.root + "/users" }
    var extensionsDir: String { stage.root + "/extensions" }

    private var server: DemoProcess?
    private var admin = AuthServerAdmin(baseURL: "")
    private var host: DemoProcess?
    private var keyboard: DemoProcess?
    /// `tether widget watch`, as a status bar runs it.
    var statusBar: DemoProcess?

    // The summary's figures.
    private(set) var expiries = 0
    private(set) var refreshes = 0
    private(set) var askersPerExpiry = 0
    private(set) var counters: [String: Int] = [:]
    private(set) var loggedOut: Bool?
    private(set) var hostDeathNoticedMs: Double?
    private(set) var extensionsEndedMs: Double?

    init(stage: DemoStage, narrator: DemoNarrator, bin: String, authServer: String) {
        (self.stage, say, self.bin, self.authServer) = (stage, narrator, bin, authServer)
        tether = bin + "/tether"
        group = stage.root + "/group"
    }

    /// The executables the demo needs, next to tether; a missing one is
    /// reported with what to build.
    static func missingExecutables(in bin: String) -> [String] {
        ["example-widget", "example-keyboard", "example-notification", "example-token-storm"]
            .filter { !FileManager.default.isExecutableFile(atPath: "\(bin)/\($0)") }
    }

    /// Plays the day. A failed check is recorded and the day goes on; a step
    /// that cannot go on (a timeout, a process gone) ends it.
    func play() throws {
        try startServer()
        try startHost()
        try logIn()
        try widgetTimelines()
        try keyboardAsks()
        try recordingFromTheKeyboard()
        try pushes()
        try tokenExpiries()
        try killAnExtension()
        try killTheHost()
        try hostReturns()
    }

    // MARK: - Steps

    private func startServer() throws {
        say.step("Start the demo auth server")
        try writeSecretFile(secretFile, "demo-client-\(UUID().uuidString)\n")
        try writeSecretFile(usersFile, "alice:\(password)\n")
        let server = try stage.start("auth-server", authServer, [
            "--port", "0", "--access-ttl", String(Self.loginTTL), "--client-secret-file", secretFile, "--users-file", usersFile,
        ])
        self.server = server
        let line = try server.line("its address", timeout: 30) { $0.hasPrefix("listening on ") }
        admin = AuthServerAdmin(baseURL: String(line.dropFirst("listening on ".count)))
        say.detail("\(admin.baseURL): rotating refresh tokens; one used twice ends the whole session")
        say.check("the server answers", (try? admin.counters())?["tokenRequests"] == 0)
    }

    private func startHost() throws {
        say.step("Start the host on a fresh group, with the widget and notification extensions")
        try FileManager.default.createDirectory(atPath: extensionsDir, withIntermediateDirectories: true)
        try writeManifest(["name": "example-widget", "role": "widget", "executable": .string(bin + "/example-widget"),
                           "arguments": ["--entries", "1", "--policy", "never"], "restart": "on-failure"])
        // On demand, as iOS runs a notification service extension: launched
        // by a push, ended once idle.
        try writeManifest(["name": "example-notification", "role": "notification",
                           "executable": .string(bin + "/example-notification"), "activation": "on-demand",
                           "idleTimeout": .double(Self.idleTimeout)])
        let host = try stage.start("host", tether, ["host", "--group", group, "--extensions-dir", extensionsDir])
        self.host = host
        let ready = try host.line("its readiness line", timeout: 30) { $0.hasPrefix("tether host ready") }
        say.detail(ready)
        say.detail(try host.line("example-widget to attach", since: 0, timeout: 30) {
            $0.hasPrefix("extension 'example-widget' attached")
        })
        let notification = try extensionEntry("example-notification")
        say.check("the notification extension rests idle, with no process, until a push",
                  notification?["state"]?.stringValue == "idle" && notification?["pid"] == .null,
                  notification.map(\.description) ?? "not listed")
        let probe = try run(["probe", "host", "--json"])
        let answer = try? JSONCodec.parse(Array(probe.text.utf8))
        say.check("`tether probe host` says running, with the host's pid",
                  answer?["running"]?.boolValue == true && answer?["pid"]?.intValue == Int(host.pid), probe.text)
    }

    private func logIn() throws {
        say.step("Log in (the password goes on stdin, never in argv; the secrets stay in the demo's own group, not your keyring)")
        let login = try run(["login", "--token-url", admin.baseURL + "/token", "--client-id", "tether-demo",
                             "--client-secret-file", secretFile, "--username", "alice", "--password-stdin", "--store", "file"],
                            input: password + "\n")
        say.check("alice is logged in", login.succeeded, login.reason)
        let status = try run(["token", "status"])
        for line in status.stdout { say.detail(line) }
        let state = try? JSONCodec.parse(Array(try run(["token", "status", "--json"]).text.utf8))
        say.check("the group's state is userAuthenticated", state?["state"]?.stringValue == "userAuthenticated")
        let set = try run(["defaults", "set", "orders.url", "\"\(admin.baseURL)/orders\""])
        say.check("orders.url is in the shared defaults", set.succeeded, set.reason)
    }

    private func widgetTimelines() throws {
        say.step("Widget timelines: the widget reloads on the defaults change and shows the orders")
        guard let host else { return }
        let shown = try host.line("the widget to show orders", since: 0) {
            $0.hasPrefix("[example-widget] shows: ") && $0.contains("orders: 1041")
        }
        say.detail(shown)
        say.check("the widget shows the orders, fetched with a token the host handed it",
                  shown.contains("orders: 1041 delivered, 1042 shipped, 1043 packing"), shown)
        let mark = host.mark
        let reload = try run(["reload", "example-widget"])
        say.check("`tether reload` reaches the widget", reload.succeeded, reload.reason)
        say.detail(try host.line("a timeline asked for by the host", since: mark) { $0.hasPrefix("[example-widget] timeline (host)") })
        try startStatusBar()
    }

    private func keyboardAsks() throws {
        say.step("The keyboard, started by hand from a shell, asks: is recording running?")
        let keyboard = try stage.start("keyboard", bin + "/example-keyboard", ["--group", group, "--name", "example-keyboard"],
                                       input: true)
        self.keyboard = keyboard
        say.detail(try keyboard.line("it to attach", timeout: 30) { $0.contains("attached to host pid") })
        keyboard.send("is recording running?")
        let answer = try keyboard.line("its answer") { $0.contains("recording is") }
        say.detail("keyboard> is recording running?   →  \(answer)")
        say.check("the keyboard reads \"not running\" from the lock", answer.contains("recording is not running"))
    }

    private func recordingFromTheKeyboard() throws {
        say.step("The keyboard asks the host to start recording, then probes it")
        guard let keyboard, let host else { return }
        keyboard.send("start recording")
        let started = try keyboard.line("the host's answer") { $0.contains("recording") }
        say.detail("keyboard> start recording   →  \(started)")
        say.check("the host started the feature", started.contains("recording started"), started)
        keyboard.send("is recording running?")
        let answer = try keyboard.line("its answer") { $0.contains("recording is") }
        say.detail("keyboard> is recording running?   →  \(answer)")
        say.check("the keyboard sees it running, held by the host", answer.contains("recording is running (pid \(host.pid))"), answer)
        // Without open access it is confined by the kernel, not only by the SDK.
        keyboard.send("sandbox")
        let write = try keyboard.line("its write") { $0.contains("sandbox: writing the group") }
        let connect = try keyboard.line("its connection") { $0.contains("sandbox: connecting") }
        say.detail("keyboard> sandbox   →  \(write); \(connect)")
        say.check("the kernel refuses the keyboard (no open access) a write to the group and a connection",
                  write.contains("refused by the kernel (Permission denied)")
                      && connect.contains("refused by the kernel (Permission denied)"), "\(write); \(connect)")
        let probe = try run(["probe", "feature", "recording"])
        say.detail("$ tether probe feature recording   →  \(probe.text)")
        say.check("any process sees it running", probe.succeeded && probe.text == "running", probe.text)
    }

    private func pushes() throws {
        say.step("Pushes launch the notification extension, which ends once idle")
        guard let host else { return }
        let mark = host.mark
        let quick = try run(["push", "--json", "--budget", "5", #"{"title":"Order update","orderId":"1042"}"#])
        let first = delivery(quick)
        let launched = try host.line("the push to launch it", since: mark) {
            $0.hasPrefix("extension 'example-notification' attached")
        }
        say.detail(launched)
        say.detail("order push   →  \(first?["content"]?["body"]?.stringValue ?? quick.reason)")
        say.check("rewritten within its budget: the order was fetched with a fresh token",
                  first?["timedOut"]?.boolValue == false
                      && first?["content"]?["body"]?.stringValue == "Order 1042: Pour-over kettle is shipped", quick.text)
        desktopNotification(quick)
        let slow = try run(["push", "--json", "--budget", "0.5",
                            #"{"title":"Weekly digest","body":"3 new offers","delayMs":3000}"#])
        let second = delivery(slow)
        say.detail("slow push (needs 3 s, has 0.5 s)   →  \(second.map { ($0["content"] ?? .null).description } ?? slow.reason)")
        say.check("out of time: the original content is delivered",
                  second?["timedOut"]?.boolValue == true && second?["content"]?["title"]?.stringValue == "Weekly digest",
                  slow.text)
        let ended = try host.line("it to end when idle", since: mark, timeout: Self.idleTimeout + 15) {
            $0.hasPrefix("extension 'example-notification' ended (idle)")
        }
        say.detail(ended)
        let entry = try extensionEntry("example-notification")
        say.check("after \(formatSeconds(Self.idleTimeout)) with nothing to do the host ended it; it is idle again",
                  entry?["state"]?.stringValue == "idle" && entry?["lastExit"]?["reason"]?.stringValue == "idle",
                  entry.map(\.description) ?? "not listed")
    }

    private func tokenExpiries() throws {
        say.step("Access tokens expire \(Self.expiries) times while every process asks at once")
        guard let host, let keyboard else { return }
        try admin.post("/admin/settings", ["accessTTL": .double(Self.shortTTL)])
        say.detail("the server now issues tokens that live \(formatSeconds(Self.shortTTL))")
        let askers = Self.stormProcesses * Self.stormTasks
        askersPerExpiry = askers + 3
        for round in 1...Self.expiries {
            let wait = try userTokenExpiry() - Date().timeIntervalSince1970 + 0.05
            say.detail("expiry \(round): waiting \(TextFormat.fixed(max(0, wait), 1)) s for the access token to expire")
            try stage.pause(wait)
            let storms = try (0..<Self.stormProcesses).map { index in
                try stage.start("storm-\(index)", bin + "/example-token-storm", ["--tasks", String(Self.stormTasks), "--group", group],
                                input: true)
            }
            for storm in storms { try storm.line("ready", timeout: 30) { $0 == "ready" } }
            let before = try admin.counters()
            let widgetMark = host.mark
            let keyboardMark = keyboard.mark
            // All at once: the storms, the widget (through the host), the
            // keyboard (through the host), the notification extension (itself).
            for storm in storms { storm.send("go") }
            let reload = try stage.start("reload", tether, ["reload", "example-widget", "--group", group])
            let push = try stage.start("push", tether, ["push", "--json", "--budget", "10", "--group", group,
                                                        #"{"title":"Order update","orderId":"1042"}"#])
            keyboard.send("token")

            var tokens = Set<String>()
            for storm in storms {
                let outcome = try storm.outcome()
                let report = outcome.stdout.last.flatMap { try? JSONCodec.parse(Array($0.utf8)) }
                for token in report?["tokens"]?.arrayValue ?? [.string("error: no report (\(outcome.reason))")] {
                    tokens.insert(token.stringValue ?? "?")
                }
            }
            let reloaded = try reload.outcome()
            let pushed = delivery(try push.outcome())
            let token = try keyboard.line("the keyboard's token", since: keyboardMark) { $0.contains("token") }
            // The widget awaits its orders inside the reload the host asked for.
            let widget = try host.line("the widget's fetch", since: widgetMark) {
                $0.hasPrefix("[example-widget] shows: ") && $0.contains("orders: ")
            }
            let after = try admin.counters()
            func delta(_ key: String) -> Int { (after[key] ?? 0) - (before[key] ?? 0) }
            expiries += 1
            refreshes += delta("refreshes")
            say.detail("expiry \(round): \(askers) tasks in \(Self.stormProcesses) processes, the widget and the keyboard "
                + "(through the host) and the notification extension asked at once → \(delta("refreshes")) refresh, "
                + "\(delta("reuseDetected")) reuse detected")
            say.check("expiry \(round): exactly one refresh, nothing refused",
                      delta("refreshes") == 1 && delta("reuseDetected") == 0 && delta("rejections") == 0,
                      "refreshes \(delta("refreshes")), reuse detected \(delta("reuseDetected")), rejections \(delta("rejections"))")
            let errors = tokens.filter { $0.hasPrefix("error") }
            say.check("expiry \(round): all \(askers) storm tasks got the same new token",
                      tokens.count == 1 && errors.isEmpty, tokens.sorted().joined(separator: ", "))
            say.check("expiry \(round): the widget and notification extension fetched with it, the keyboard got it",
                      reloaded.succeeded && widget.contains("orders: 1041 delivered") && token.contains("got an access token")
                          && pushed?["content"]?["body"]?.stringValue == "Order 1042: Pour-over kettle is shipped",
                      "\(token); push: \(pushed.map(\.description) ?? "none")")
        }
    }

    private func killAnExtension() throws {
        say.step("An extension is killed -9; the host restarts it")
        guard let host else { return }
        guard let old = try extensionPIDs()["example-widget"] else {
            throw DemoFailure("the host does not list example-widget")
        }
        let mark = host.mark
        kill(old, SIGKILL)
        say.detail("$ kill -9 \(old)   (example-widget)")
        say.detail(try host.line("the host to see it die", since: mark) {
            $0.hasPrefix("extension 'example-widget'") && $0.contains("restarting")
        })
        let attached = try host.line("the restart", since: mark) { $0.hasPrefix("extension 'example-widget' attached") }
        say.detail(attached)
        let new = try extensionPIDs()["example-widget"]
        say.check("a new example-widget runs", new != nil && new != old, "pid \(new.map(String.init) ?? "none")")
        let shows = try host.line("its first timeline", since: mark) { $0.hasPrefix("[example-widget] shows:") }
        say.detail(shows)
        say.check("it shows the orders again", shows.contains("orders: 1041"), shows)
        let entry = try extensionEntry("example-widget")
        say.check("status says why the last one ended: crashed (signal 9)",
                  entry?["lastExit"]?["reason"]?.stringValue == "crashed" && entry?["lastExit"]?["signal"]?.intValue == 9,
                  entry.map(\.description) ?? "not listed")
    }

    private func killTheHost() throws {
        say.step("The host is killed -9; everyone notices at once")
        guard let host, let keyboard else { return }
        let children = Array(try extensionPIDs().values)
        let mark = keyboard.mark
        let killed = MonotonicClock.nanoseconds()
        host.signal(SIGKILL)
        say.detail("$ kill -9 \(host.pid)   (the host)")
        let noticed = try keyboard.line("the keyboard to notice", since: mark) { $0.contains("carrying on without a host") }
        hostDeathNoticedMs = Double(MonotonicClock.nanoseconds() - killed) / 1e6
        say.detail("keyboard: \(noticed)")
        let allEnded = LiveProcesses.waitForExit(children, untilNanoseconds: killed + 1_000_000_000)
        extensionsEndedMs = allEnded ? Double(MonotonicClock.nanoseconds() - killed) / 1e6 : nil
        say.check("the keyboard started by hand noticed in \(TextFormat.fixed(hostDeathNoticedMs ?? 0, 1)) ms and carries on",
                  (hostDeathNoticedMs ?? .infinity) < 1000)
        say.check(allEnded ? "the host's \(children.count) extensions ended within \(TextFormat.fixed(extensionsEndedMs ?? 0, 0)) ms"
                           : "the host's extensions ended within 1 s", allEnded && !children.isEmpty,
                  "still running: \(children.filter { !LiveProcesses.hasEnded($0) })")
        // The kernel drops a killed process's locks a moment after its
        // sockets close (a deferred release): wait for it, boundedly.
        let gone = try run(["watch", "host", "--until", "not-running", "--timeout", "5"])
        say.detail("$ tether watch host --until not-running   →  \(gone.text) (exit \(gone.status.shellCode))")
        let probe = try run(["probe", "host"])
        say.detail("$ tether probe host   →  \(probe.text) (exit \(probe.status.shellCode))")
        say.check("the lock says the host is gone", probe.status == .exited(1) && probe.text == "not running", probe.text)
        keyboard.send("is recording running?")
        let answer = try keyboard.line("its answer") { $0.contains("recording is") }
        say.detail("keyboard> is recording running?   →  \(answer)")
        say.check("the feature died with its host", answer.contains("recording is not running"), answer)
        try statusBarSaysOffline()
    }

    private func hostReturns() throws {
        say.step("A new host starts; the keyboard says it cannot attach, started again it attaches, and the session is intact")
        guard let old = keyboard else { return }
        let host = try stage.start("host-2", tether, ["host", "--group", group, "--extensions-dir", extensionsDir])
        self.host = host
        say.detail(try host.line("its readiness line", timeout: 30) { $0.hasPrefix("tether host ready") })
        say.detail("keyboard: " + (try old.line("the keyboard to say so", timeout: 30) { $0.contains("cannot attach to it") }))
        old.closeInput()
        _ = try old.outcome()
        keyboard = try stage.start("keyboard-2", bin + "/example-keyboard", ["--group", group, "--name", "example-keyboard"], input: true)
        let attached = try keyboard?.line("the keyboard to attach", timeout: 30) { $0.contains("attached to host pid") } ?? ""
        say.check("the keyboard started again attached to the new host", attached.contains("pid \(host.pid)"), attached)
        try statusBarIsBack()
        let state = (try? CredentialStore(group: GroupDirectory(path: group)).snapshot().state)
        loggedOut = state != .userAuthenticated
        say.check("alice is still logged in: no refresh token was ever reused", state == .userAuthenticated, state?.rawValue ?? "unreadable")
        counters = (try? admin.counters()) ?? [:]
    }
}
