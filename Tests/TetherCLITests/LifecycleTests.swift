import Foundation
import Testing
import TetherTestSupport
import TetherIPC

/// Extensions live as iOS extensions do: on-demand ones launched by work and
/// ended when idle, hung ones killed by the watchdog, exit codes that mean
/// "do not restart me". Real hosts, real processes.
@Suite(.timed) struct LifecycleTests {
    /// A manifest for `executable` with `extra` fields.
    func manifest(_ fixture: HostFixture, name: String, role: String, executable: String,
                  arguments: [String] = [], _ extra: [String: Any] = [:]) throws {
        var object: [String: Any] = ["name": name, "role": role, "executable": executable, "arguments": arguments]
        object.merge(extra) { _, new in new }
        try JSONSerialization.data(withJSONObject: object)
            .write(to: URL(fileURLWithPath: "\(fixture.extensions)/\(name).extension.json"))
    }

    func entry(_ fixture: HostFixture, _ name: String) throws -> [String: Any] {
        let list = try #require(try fixture.status()["extensions"] as? [[String: Any]])
        return try #require(list.first { $0["name"] as? String == name })
    }

    func push(_ fixture: HostFixture, _ payload: String, budget: String = "10") throws -> [String: Any] {
        let result = try fixture.group.run(["push", "--json", "--budget", budget, payload], timeout: 30)
        #expect(result.status == 0, "\(result.stderr)")
        return try #require((try fixture.group.json(result)["delivered"] as? [[String: Any]])?.first)
    }

    /// Reads host lines until one starts with `prefix`; every line read.
    func lines(from host: TestProcess, until prefix: String, timeout: Double = 15) throws -> [String] {
        var seen: [String] = []
        let deadline = TestTimeout.deadline(after: timeout)
        while Date() < deadline {
            guard let line = try? host.readLine(timeout: max(0.1, deadline.timeIntervalSinceNow)) else { break }
            seen.append(line)
            if line.hasPrefix(prefix) { return seen }
        }
        throw TestTimeout(what: "a host line starting \(prefix) (saw \(seen))")
    }

    /// A protocol 1 notification extension in Python: runs `first`, says
    /// hello, and answers each push with its payload after `rewrite` (on `c`).
    func pythonNotification(first: String = "", rewrite: String) -> String {
        """
        import json, os, socket
        \(first)
        s = socket.socket(fileno=int(os.environ["TETHER_HOST_FD"]))
        f = s.makefile("r", encoding="utf-8", newline="\\n")
        out = s.makefile("w", encoding="utf-8", newline="\\n")
        def send(m):
            out.write(json.dumps(m) + "\\n"); out.flush()
        send({"jsonrpc": "2.0", "id": 1, "method": "\(HostMethod.hello)",
              "params": {"name": os.environ["TETHER_EXTENSION"], "role": "notification"}})
        for line in f:
            m = json.loads(line)
            if m.get("method") == "\(ExtensionMethod.receivePush)":
                c = dict(m["params"]["payload"]); \(rewrite)
                send({"jsonrpc": "2.0", "id": m["id"], "result": {"content": c}})
        """
    }

    func pid(in line: String) -> Int? {
        line.firstMatch(of: /\(pid (\d+)/).flatMap { Int($0.1) }
    }

    // MARK: - Activation

    @Test func anOnDemandNotificationExtensionIsLaunchedByAPushAndEndedWhenIdle() throws {
        let fixture = try HostFixture()
        try manifest(fixture, name: "notify", role: "notification", executable: exampleExecutable("example-notification"),
                     ["idleTimeout": 1])
        try fixture.withHost { host in
            var notify = try entry(fixture, "notify")
            #expect(notify["state"] as? String == "idle")
            #expect(notify["activation"] as? String == "on-demand")
            #expect(notify["pid"] is NSNull, "not started with the host")

            let first = try push(fixture, #"{"title":"Hi"}"#)
            #expect(first["extension"] as? String == "notify")
            #expect((first["content"] as? [String: Any])?["title"] as? String == "[notify] Hi")
            #expect(first["timedOut"] as? Bool == false)
            let attached = try lines(from: host, until: "extension 'notify' attached")
            let firstPID = pid(in: attached.last ?? "")
            notify = try entry(fixture, "notify")
            #expect(notify["state"] as? String == "running")

            // Idle for its timeout: the notice (the SDK ends itself), then gone.
            let ending = try lines(from: host, until: "extension 'notify' ended (idle)")
            #expect(ending.contains { $0.contains("[notify] the host is ending this extension (idle)") }, "\(ending)")
            notify = try entry(fixture, "notify")
            #expect(notify["state"] as? String == "idle")
            #expect(notify["pid"] is NSNull)
            #expect(notify["restarts"] as? Int == 0, "an idle end is no restart")
            let last = try #require(notify["lastExit"] as? [String: Any])
            #expect(last["reason"] as? String == "idle")
            #expect(last["code"] as? Int == 0, "it ended itself on the notice, before SIGTERM")
            if let firstPID { try waitUntilGone([Int32(firstPID)], within: 5) }

            // The next push launches it again.
            let second = try push(fixture, #"{"title":"Again"}"#)
            #expect((second["content"] as? [String: Any])?["title"] as? String == "[notify] Again")
            let again = try lines(from: host, until: "extension 'notify' attached")
            #expect(pid(in: again.last ?? "") != firstPID)
        }
    }

    /// Pushes that arrive while the extension launches wait for its hello,
    /// and one launch serves them all. The extension (Python, protocol 1)
    /// holds its hello until the test opens a FIFO, so both pushes are
    /// surely waiting.
    @Test func pushesDuringALaunchWaitForTheHello() throws {
        let fixture = try HostFixture()
        // Beside its manifest: in its world too.
        let gate = fixture.extensions + "/gate"
        #expect(mkfifo(gate, 0o600) == 0)
        let script = pythonNotification(first: "open(\(String(reflecting: gate))).readline()",
                                        rewrite: #"c["title"] = "[late] " + c.get("title", "")"#)
        try writeFile(fixture.extensions + "/late.py", script)
        try writeFile(fixture.extensions + "/late.sh", "#!/bin/sh\nexec python3 \"$(dirname \"$0\")/late.py\"\n", mode: 0o755)
        try manifest(fixture, name: "late", role: "notification", executable: "late.sh", ["activation": "on-demand"])
        try fixture.withHost { host in

            let pushes = try (0..<2).map { index in
                try startTether(fixture.group.withGroup(["push", "--json", "--budget", "20", #"{"title":"P\#(index)"}"#]))
            }
            // Bounded: until the host counts both pushes waiting for the hello.
            let deadline = TestTimeout.deadline(after: 15)
            var waiting = 0
            while waiting < 2, Date() < deadline {
                waiting = try entry(fixture, "late")["waitingForHello"] as? Int ?? 0
            }
            #expect(waiting == 2)
            #expect(try entry(fixture, "late")["attached"] as? Bool == false)
            // Let it say hello.
            // Read-write never blocks (a write-only open would wait for the
            // reader for good if it never came); the line waits in the FIFO
            // while it is open, for a reader that opens it before or after.
            let writer = open(gate, O_RDWR)
            #expect(writer >= 0)
            defer { close(writer) }
            #expect(write(writer, "go\n", 3) == 3)
            for (index, process) in pushes.enumerated() {
                #expect(try process.waitForExit(timeout: 20) == 0)
                let output = try process.remainingOutput()
                #expect(output.contains(#""title":"[late] P\#(index)""#), "\(output)")
                #expect(output.contains(#""timedOut":false"#), "\(output)")
            }
            let seen = try lines(from: host, until: "extension 'late' attached")
            #expect(seen.filter { $0.hasPrefix("extension 'late' attached") }.count == 1)
            #expect(try entry(fixture, "late")["waitingForHello"] as? Int == 0)
        }
    }

    /// A push that comes while an idle instance is being ended waits for a
    /// new one rather than going to the dying one. The extension (Python,
    /// protocol 1, so SIGTERM comes a second after the idle end) runs
    /// through a wrapper that does not exec: its hello comes from the
    /// wrapper's child, still the host's own.
    @Test func aPushDuringAnIdleEndGoesToTheNextInstance() throws {
        let fixture = try HostFixture()
        // Which instance answered: not its pid (1 in a world of its own).
        let script = pythonNotification(first: "instance = os.urandom(8).hex()", rewrite: #"c["by"] = instance"#)
        try writeFile(fixture.extensions + "/quick.py", script)
        try writeFile(fixture.extensions + "/quick.sh", "#!/bin/sh\npython3 \"$(dirname \"$0\")/quick.py\"\n", mode: 0o755)
        try manifest(fixture, name: "quick", role: "notification", executable: "quick.sh", ["idleTimeout": 0.5])
        try fixture.withHost { host in
            let first = try push(fixture, #"{"title":"A"}"#)
            let firstBy = (first["content"] as? [String: Any])?["by"] as? String
            #expect(firstBy != nil)
            #expect(try entry(fixture, "quick")["managed"] as? Bool == true, "the wrapper's child is the host's own")
            // Bounded: until the host is ending it for idleness.
            let deadline = TestTimeout.deadline(after: 10)
            var state = ""
            while state != "stopping", Date() < deadline { state = try entry(fixture, "quick")["state"] as? String ?? "" }
            #expect(state == "stopping")
            let second = try push(fixture, #"{"title":"B"}"#)
            let secondBy = (second["content"] as? [String: Any])?["by"] as? String
            #expect(second["modified"] as? Bool == true, "\(second)")
            #expect(secondBy != nil && secondBy != firstBy, "a new instance took it")
        }
    }

    /// Two stops at once, of an extension that ignores SIGTERM (so both
    /// wait for the SIGKILL after the grace): both are answered, and the
    /// host's own stop at SIGTERM still finishes.
    @Test(.waits) func concurrentStopsAreAllAnswered() throws {
        let fixture = try HostFixture()
        // Its trap set before its hello: once `extension start` is answered, it ignores SIGTERM.
        try fixture.addExtension("stubborn", script: "trap '' TERM\n" + HostFixture.shellHello("stubborn") + "\nwhile :; do sleep 1; done")
        let host = try fixture.startHost()
        defer { host.signal(SIGKILL) }
        #expect(try entry(fixture, "stubborn")["state"] as? String == "running")
        let stops = try (0..<2).map { _ in try startTether(fixture.group.withGroup(["extension", "stop", "stubborn"])) }
        for stop in stops {
            #expect(try stop.waitForExit(timeout: 15) == 0)
            #expect(try stop.remainingOutput() == "stubborn stopped\n")
        }
        #expect(try fixture.group.run(["extension", "start", "stubborn"]).status == 0)
        let again = try startTether(fixture.group.withGroup(["extension", "stop", "stubborn"]))
        host.signal(SIGTERM)
        #expect(try again.waitForExit(timeout: 15) != -1)
        #expect(try host.waitForExit(timeout: 15) == 0, "the shutdown finished though a stop was pending")
    }

    @Test func extensionStartStopAndListDriveTheLifecycle() throws {
        let fixture = try HostFixture()
        let widget = exampleExecutable("example-widget")
        try manifest(fixture, name: "lazy", role: "widget", executable: widget, arguments: ["--policy", "never"],
                     ["activation": "on-demand", "idleTimeout": 600])
        try manifest(fixture, name: "steady", role: "widget", executable: widget, arguments: ["--policy", "never"])
        try fixture.withHost { host in
            _ = try lines(from: host, until: "extension 'steady' attached")
            #expect(try entry(fixture, "lazy")["state"] as? String == "idle")

            let started = try fixture.group.run(["extension", "start", "lazy"])
            #expect(started.status == 0, "\(started.stderr)")
            #expect(started.stdout.hasPrefix("lazy attached (pid "), "\(started.stdout)")
            let listed = try fixture.group.run(["extension", "list"])
            #expect(listed.stdout.contains("lazy  widget  running  pid "), "\(listed.stdout)")

            let stopped = try fixture.group.run(["extension", "stop", "lazy"])
            #expect(stopped.stdout == "lazy stopped\n", "\(stopped.stdout)\(stopped.stderr)")
            var lazy = try entry(fixture, "lazy")
            #expect(lazy["state"] as? String == "idle", "an on-demand extension rests idle after a stop")
            #expect((lazy["lastExit"] as? [String: Any])?["reason"] as? String == "stopped")

            // A reload launches an idle on-demand widget: its first timeline.
            let reload = try fixture.group.run(["reload", "lazy"])
            #expect(reload.status == 0, "\(reload.stderr)")
            _ = try lines(from: host, until: "[lazy] timeline (start)")
            lazy = try entry(fixture, "lazy")
            #expect(lazy["state"] as? String == "running")

            // So does a change to the shared defaults, from any process.
            #expect(try fixture.group.run(["extension", "stop", "lazy"]).stdout == "lazy stopped\n")
            #expect(try entry(fixture, "lazy")["state"] as? String == "idle")
            #expect(try fixture.group.run(["defaults", "set", "greeting", "\"hi\""]).status == 0)
            // Bounded: until the host has launched it (the change is heard within a loop turn).
            let deadline = TestTimeout.deadline(after: 10)
            var state = "idle"
            while state == "idle", Date() < deadline { state = try entry(fixture, "lazy")["state"] as? String ?? "" }
            #expect(state == "running")

            // An always extension that is stopped stays stopped until started.
            #expect(try fixture.group.run(["extension", "stop", "steady"]).stdout == "steady stopped\n")
            var steady = try entry(fixture, "steady")
            #expect(steady["state"] as? String == "stopped")
            #expect(steady["restarts"] as? Int == 0)
            #expect(try fixture.group.run(["extension", "start", "steady"]).stdout.hasPrefix("steady attached (pid "))
            steady = try entry(fixture, "steady")
            #expect(steady["state"] as? String == "running")

            let json = try fixture.group.json(try fixture.group.run(["extension", "list", "--json"]))
            #expect((json["extensions"] as? [[String: Any]])?.count == 2)
            let unknown = try fixture.group.run(["extension", "start", "nobody"])
            #expect(unknown.status == 1)
            #expect(unknown.stderr.contains("no extension named 'nobody' in this host's manifests"), "\(unknown.stderr)")
        }
    }

    // MARK: - Watchdog

    /// A SIGSTOPped Swift extension stops answering pings: killed and
    /// restarted within two periods. A protocol 1 extension (Python, which
    /// cannot answer pings) is never pinged, so it stays.
    @Test func theWatchdogReplacesAStoppedExtensionAndLeavesVersionOneAlone() throws {
        let fixture = try HostFixture()
        try manifest(fixture, name: "frozen", role: "widget", executable: exampleExecutable("example-widget"),
                     arguments: ["--policy", "never"], ["watchdog": 1])
        try addMuteNotificationExtension(fixture)
        try manifest(fixture, name: "mute", role: "notification", executable: "mute.sh",
                     ["activation": "always", "restart": "never", "watchdog": 1])
        try fixture.withHost { host in
            var seen = try lines(from: host, until: "extension 'frozen' attached")
            let frozen = try #require(pid(in: seen.last ?? ""))
            if !seen.contains(where: { $0.hasPrefix("extension 'mute' attached") }) {
                seen = try lines(from: host, until: "extension 'mute' attached")
            }
            let mute = try #require(try entry(fixture, "mute")["pid"] as? Int)
            // Its manifest asks for a watchdog it cannot have: said, not silently ignored.
            try host.waitForError(containing: "extension 'mute' speaks protocol 1, which cannot answer pings: its watchdog is not enforced")

            kill(pid_t(frozen), SIGSTOP)
            let stopped = Date()
            try host.waitForError(containing: "extension 'frozen' is unresponsive (no answer to a ping in 1 s); killing it")
            let replaced = try lines(from: host, until: "extension 'frozen' attached")
            let elapsed = Date().timeIntervalSince(stopped)
            #expect(pid(in: replaced.last ?? "") != frozen)
            // Two periods plus the restart's 100 ms and start-up; generous for a loaded machine.
            #expect(elapsed < 6, "replaced after \(elapsed) s")
            let entry = try entry(fixture, "frozen")
            let last = try #require(entry["lastExit"] as? [String: Any])
            #expect(last["reason"] as? String == "unresponsive")
            #expect(last["signal"] as? Int == Int(SIGKILL))
            #expect(entry["restarts"] as? Int == 1)
            try waitUntilGone([pid_t(frozen)], within: 5)

            // Several periods later the version 1 extension is still there.
            let still = try self.entry(fixture, "mute")
            #expect(still["pid"] as? Int == mute)
            #expect(still["attached"] as? Bool == true)
        }
    }

    /// A script that breaks its link's protocol, before its hello or after
    /// it: the host drops the link and kills the launch as unresponsive (a
    /// script that ignores its link's end would otherwise run on detached,
    /// unwatched, never to attach again); its policy then decides (never).
    @Test(arguments: [
        ("garbage after its hello", "after"),
        ("garbage before its hello", "before"),
        ("a frame past 1 MiB", "large"),
    ])
    func aLaunchThatBreaksItsLinksProtocolIsKilledAsUnresponsive(_ what: String, _ kind: String) throws {
        let fixture = try HostFixture()
        let garbage = "for i in $(seq 40); do echo 'not json' >&\"$TETHER_HOST_FD\"; done"
        let script = switch kind {
        case "after": HostFixture.shellHello("babbler") + "\n" + garbage
        case "before": garbage
        default: "head -c 1100000 /dev/zero | tr '\\0' x >&\"$TETHER_HOST_FD\""
        }
        try fixture.addExtension("babbler", restart: "never", script: script + "\nexec sleep 600")
        try fixture.withHost { host in
            try host.waitForError(containing: "extension 'babbler' broke its link's protocol")
            var last: [String: Any] = [:]
            try waitFor("babbler's exit", timeout: 20) {
                last = (try? entry(fixture, "babbler")["lastExit"] as? [String: Any]) ?? [:]
                return !last.isEmpty
            }
            #expect(last["reason"] as? String == "unresponsive", "\(what): \(last)")
            #expect(last["signal"] as? Int == Int(SIGKILL), "\(what): \(last)")
            #expect(try entry(fixture, "babbler")["state"] as? String != "running", "\(what)")
        }
    }

    // MARK: - Exit codes

    @Test func anExitCodeListedInNoRestartExitCodesIsNotRestarted() throws {
        let fixture = try HostFixture()
        try fixture.addExtension("custom", restart: "always", script: "exit 3")
        try manifest(fixture, name: "custom", role: "widget", executable: "custom.sh",
                     ["restart": "always", "noRestartExitCodes": [3]])
        try fixture.withHost { host in
            // Failures are errors: on the host's stderr. (The default, 78, is
            // ExtensionManifestTests'; the decision ExtensionLifecycleTests'.)
            try host.waitForError(containing: "extension 'custom' failed: it exited with status 3, which its manifest lists")
            for (name, code) in [("custom", 3)] {
                let entry = try entry(fixture, name)
                #expect(entry["state"] as? String == "failed")
                #expect(entry["restarts"] as? Int == 0)
                let last = try #require(entry["lastExit"] as? [String: Any])
                #expect(last["code"] as? Int == code)
                #expect(last["reason"] as? String == "exited")
            }
        }
    }
}
