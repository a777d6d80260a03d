import CTetherSystem
import Foundation
import Testing
import TetherTestSupport
import TetherIPC

/// The SDK's example extensions against the real host: attach, re-attach,
/// one instance, the three roles.
@Suite(.timed) struct ExtensionTests {
    /// An example extension started by hand on the fixture's group.
    func startByHand(_ group: TestGroup, _ example: String, _ arguments: [String] = [],
                     environment: [String: String]? = nil) throws -> TestProcess {
        try TestProcess(exampleExecutable(example), ["--group", group.path] + arguments, environment: environment)
    }

    func startHost(_ group: TestGroup, _ extra: [String] = []) throws -> TestProcess {
        let host = try group.start(["host", "--grace", "2"] + extra)
        #expect(try host.readLine()?.hasPrefix("tether host ready: pid \(host.pid)") == true)
        return host
    }

    func manifest(_ fixture: HostFixture, name: String, role: String, example: String, arguments: [String] = [],
                  openAccess: Bool = false) throws {
        let object: [String: Any] = ["name": name, "role": role, "executable": exampleExecutable(example),
                                     "arguments": arguments, "openAccess": openAccess,
                                     "activation": "always"]
        try JSONSerialization.data(withJSONObject: object)
            .write(to: URL(fileURLWithPath: "\(fixture.extensions)/\(name).extension.json"))
    }

    @Test func handStartedExtensionReattachesToANewHost() throws {
        let group = try TestGroup()
        let widget = try startByHand(group, "example-widget", ["--entries", "1", "--policy", "never"])
        defer { widget.stopAlways() }
        try widget.expectLine("no host is running; carrying on without a host")

        let first = try startHost(group)
        try widget.expectLine("attached to host pid \(first.pid) (started by hand)")
        let listed = try #require(try group.json(try group.run(["status", "--json"]))["extensions"] as? [[String: Any]])
        #expect(listed.first?["name"] as? String == "example-widget")
        #expect(listed.first?["pid"] as? Int == Int(widget.pid))
        #expect(listed.first?["managed"] as? Bool == false)

        first.signal(SIGKILL)
        #expect(try first.waitForExit() == 128 + SIGKILL)
        try widget.expectLine("lost the connection to host pid \(first.pid); carrying on without a host")
        #expect(processAlive(widget.pid), "an extension started by hand outlives its host")

        let second = try startHost(group)
        try widget.expectLine("attached to host pid \(second.pid) (started by hand)")
        #expect(try group.run(["reload", "example-widget"]).stdout == "reloading: example-widget\n")
        try widget.expectLine("timeline (host): 1 entries, reload never")

        second.signal(SIGTERM)
        #expect(try second.waitForExit() == 0)
        try widget.expectLine("host pid \(second.pid) stopped; carrying on without a host")
        widget.signal(SIGTERM)
        #expect(try widget.waitForExit() == 0)
    }

    @Test func oneInstanceOnly() throws {
        let fixture = try HostFixture()
        try manifest(fixture, name: "clock", role: "widget", example: "example-widget", arguments: ["--policy", "never"])
        let byHand = try startByHand(fixture.group, "example-widget", ["--name", "clock", "--policy", "never"])
        defer { byHand.stopAlways() }
        try byHand.expectLine("no host is running; carrying on without a host")

        let second = try runCommand(exampleExecutable("example-widget"), ["--group", fixture.group.path, "--name", "clock"])
        #expect(second.status == 1)
        #expect(second.stderr.contains("extension 'clock' is already running (its instance lock is held by pid \(byHand.pid))"),
                "\(second.stderr)")

        // The host does not start a second copy; it waits for this one to end.
        try fixture.withHost { host in
            try byHand.expectLine("attached to host pid \(host.pid) (started by hand)")
            var clock = try #require((try fixture.status()["extensions"] as? [[String: Any]])?.first)
            #expect(clock["state"] as? String == "external")
            #expect(clock["pid"] as? Int == Int(byHand.pid))

            byHand.signal(SIGTERM)
            #expect(try byHand.waitForExit() == 0)
            let lines = try host.expectLineStarting("[clock] attached to host pid \(host.pid)")
            #expect(lines.last == "[clock] attached to host pid \(host.pid)", "the host's own copy, not one by hand")
            clock = try #require((try fixture.status()["extensions"] as? [[String: Any]])?.first)
            #expect(clock["state"] as? String == "running")
            #expect(clock["managed"] as? Bool == true)
            #expect(clock["pid"] as? Int != Int(byHand.pid))
        }
    }

    @Test func theExampleManifestsRunAndTheirProcessesEndWithAKilledHost() throws {
        let group = try TestGroup()
        let examples = Repository.path("examples/extensions")
        // The manifests name bare executables, found next to tether.
        let host = try startHost(group, ["--extensions-dir", examples])
        var attached: Set<String> = []
        while attached.count < 2, let line = try host.readLine() {
            if let name = line.firstMatch(of: /^extension '(.+)' attached/)?.1 { attached.insert(String(name)) }
        }
        #expect(attached == ["example-widget", "example-keyboard"])
        // The notification extension is on demand: a push launches it.
        let idle = try #require(try group.json(try group.run(["status", "--json"]))["extensions"] as? [[String: Any]])
        #expect(idle.first { $0["name"] as? String == "example-notification" }?["state"] as? String == "idle")
        #expect(try group.run(["push", #"{"title":"Hi"}"#]).stdout.contains("delivered by example-notification"))
        let listed = try #require(try group.json(try group.run(["status", "--json"]))["extensions"] as? [[String: Any]])
        let pids = listed.compactMap { $0["pid"] as? Int }.map(Int32.init)
        #expect(pids.count == 3)
        #expect(listed.allSatisfy { $0["attached"] as? Bool == true && $0["managed"] as? Bool == true })

        host.signal(SIGKILL)
        #expect(try host.waitForExit() == 128 + SIGKILL)
        #expect(try group.run(["probe", "host"]).status == 1)
        try waitUntilGone(pids, within: 1)
    }

    @Test func anExtensionBuiltWithoutAManifestSaysHowToEmbedOne() throws {
        let result = try runCommand(exampleExecutable("example-widget"), ["--manifest"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("built without a manifest: add the TetherManifest plugin"), "\(result.stderr)")
    }

    /// Any language will do: the Python example speaks the manifest and JSON-RPC, no SDK.
    @Test func aPythonNotificationExtensionRewritesPushes() throws {
        let group = try TestGroup()
        let example = Repository.path("examples/python-notification")
        let host = try startHost(group, ["--extensions-dir", example])
        defer { host.signal(SIGTERM) }
        // On demand (the role's default): the push launches it, and it
        // speaks protocol 1 (no version in its hello). Two pushes during
        // the launch reach it back to back, in one read: both answered.
        let early = try (0..<2).map { index in
            try startTether(group.withGroup(["push", "--budget", "10", #"{"title":"Early \#(index)"}"#]))
        }
        for (index, process) in early.enumerated() {
            #expect(try process.waitForExit(timeout: 20) == 0)
            #expect(try process.remainingOutput().contains(#""title":"[python] Early \#(index)""#))
        }
        let push = try group.json(try group.run(["push", "--json", #"{"title":"Hi","body":"there"}"#]))
        _ = try host.expectLineStarting("extension 'python-notification' attached")
        let first = try #require((push["delivered"] as? [[String: Any]])?.first)
        #expect(first["extension"] as? String == "python-notification")
        #expect((first["content"] as? [String: Any])?["title"] as? String == "[python] Hi")
        #expect((first["content"] as? [String: Any])?["body"] as? String == "there")
    }

    // MARK: - Notification

    @Test func pushIsRewrittenWithinItsBudgetOrDeliveredAsSent() throws {
        let fixture = try HostFixture()
        try manifest(fixture, name: "notify", role: "notification", example: "example-notification")
        try fixture.withHost { host in
            _ = try host.expectLineStarting("[notify] attached to host pid \(host.pid)")

            let rewritten = try fixture.group.json(try fixture.group.run(["push", "--json", #"{"title":"Hi","body":"there"}"#]))
            let first = try #require((rewritten["delivered"] as? [[String: Any]])?.first)
            #expect(first["extension"] as? String == "notify")
            #expect(first["modified"] as? Bool == true)
            #expect(first["timedOut"] as? Bool == false)
            let content = try #require(first["content"] as? [String: Any])
            #expect(content["title"] as? String == "[notify] Hi")
            #expect(content["body"] as? String == "there")

            // Too slow for its budget: the original is delivered.
            let slow = try fixture.group.run(["push", "--budget", "0.2", #"{"title":"Slow","delayMs":10000}"#])
            #expect(slow.status == 0, "\(slow.stderr)")
            #expect(slow.stdout == #"delivered the original (notify ran out of its time budget): {"delayMs":10000,"title":"Slow"}"# + "\n")

            // From standard input.
            let piped = try TestProcess(tetherExecutable, ["push", "-", "--group", fixture.group.path])
            piped.writeStdin(#"{"title":"Piped"}"#)
            piped.closeStdin()
            #expect(try piped.waitForExit() == 0)
            #expect(try piped.remainingOutput().contains(#""title":"[notify] Piped""#))

            for bad in ["not json", "[1,2]", "\"text\""] {
                let result = try fixture.group.run(["push", bad])
                #expect(result.status == 2, "\(bad)")
                #expect(result.stderr.contains("the payload must be a JSON object"))
            }
        }
    }

    // MARK: - Widget

    @Test func widgetReloadsAtTheEndOfItsTimelineAndAfterADate() throws {
        let group = try TestGroup()
        let atEnd = try startByHand(group, "example-widget", ["--name", "at-end", "--every", "0.05", "--entries", "2"])
        defer { atEnd.stopAlways() }
        let seen = try atEnd.expectLine("timeline (policy): 2 entries, reload at end")
        #expect(seen.filter { $0.hasPrefix("shows: ") }.count == 2, "both entries shown before the reload: \(seen)")

        let after = try startByHand(group, "example-widget", ["--name", "after", "--entries", "1", "--policy", "after:0.2"])
        defer { after.stopAlways() }
        _ = try after.expectLineStarting("timeline (policy): 1 entries, reload after ")
    }

    @Test func widgetWithPolicyNeverReloadsWhenTheHostOrDefaultsSay() throws {
        let group = try TestGroup()
        let host = try startHost(group)
        defer { host.signal(SIGTERM) }
        let widget = try startByHand(group, "example-widget", ["--every", "0.05", "--entries", "2", "--policy", "never"])
        defer { widget.stopAlways() }
        // Both entries shown and attached; a policy other than never would reload now.
        var shown = 0
        var attached = false
        while shown < 2 || !attached, let line = try widget.readLine() {
            if line.hasPrefix("shows: ") { shown += 1 }
            if line == "attached to host pid \(host.pid) (started by hand)" { attached = true }
        }
        #expect(try group.run(["reload"]).status == 0)
        #expect(try widget.expectLineStarting("timeline (").last == "timeline (host): 2 entries, reload never")

        let client = try RawClient(path: group.path + "/host.sock")
        defer { client.close() }
        client.send(Array(#"{"jsonrpc":"2.0","id":1,"method":"\#(HostMethod.defaultsChanged)","params":{"keys":["orders"]}}"#.utf8 + [0x0a]))
        #expect(client.response(id: 1)?.contains(#""notified":1"#) == true)
        #expect(try widget.expectLineStarting("timeline (").last == "timeline (defaults): 2 entries, reload never")
    }

    // MARK: - Keyboard

    @Test func keyboardAsksAboutAndStartsFeaturesButIsReadOnly() throws {
        let group = try TestGroup()
        let host = try startHost(group)
        defer { host.signal(SIGTERM) }
        let keyboard = try startByHand(group, "example-keyboard")
        keyboard.writeStdin("is recording running?\nstart recording\nis recording running?\nstop recording\nnote hi\nhello\n")
        keyboard.closeStdin()
        #expect(try keyboard.waitForExit() == 0)
        let lines = try keyboard.remainingOutput().split(separator: "\n").map(String.init)
        #expect(lines == [
            "attached to host pid \(host.pid) (started by hand)",
            "recording is not running",
            "asked the host: recording started",
            "recording is running (pid \(host.pid))",
            "cannot stop recording: 'example-keyboard' has read-only access to the group (set \"openAccess\": true in its manifest)",
            "cannot save the note: 'example-keyboard' has read-only access to the group (set \"openAccess\": true in its manifest)",
            "typed: hello",
        ])
        // Started without open access, it ended with the keyboard.
        #expect(try group.run(["probe", "feature", "recording"]).status == 1, "the feature outlived its starter")
        #expect(!FileManager.default.fileExists(atPath: group.path + "/shared/keyboard-note"))

        // The host refuses a read-only keyboard's stop, whatever the SDK says.
        #expect(try group.run(["feature", "start", "recording"]).status == 0)
        let client = try RawClient(path: group.path + "/host.sock")
        defer { client.close() }
        client.send(Array((#"{"jsonrpc":"2.0","id":1,"method":"\#(HostMethod.hello)","params":{"name":"raw-kb","role":"keyboard"}}"#
            + "\n" + #"{"jsonrpc":"2.0","id":2,"method":"\#(HostMethod.featureStop)","params":{"name":"recording"}}"# + "\n").utf8))
        #expect(client.response(id: 1)?.contains(#""hostPid""#) == true)
        #expect(client.response(id: 2)?.contains("read-only access") == true)
        #expect(try group.run(["probe", "feature", "recording"]).status == 0)
    }

    @Test func keyboardWithOpenAccessMayWrite() throws {
        let group = try TestGroup()
        let host = try startHost(group)
        defer { host.signal(SIGTERM) }
        #expect(try group.run(["feature", "start", "playback"]).status == 0)
        let keyboard = try startByHand(group, "example-keyboard", environment: ["TETHER_OPEN_ACCESS": "1"])
        // It stops what it started, not what the user did.
        keyboard.writeStdin("start recording\nstop recording\nstop playback\nnote remember the milk\n")
        keyboard.closeStdin()
        #expect(try keyboard.waitForExit() == 0)
        let output = try keyboard.remainingOutput()
        #expect(output.contains("asked the host: recording started\nasked the host: recording stopped\n"
                                + "cannot stop playback: 'example-keyboard' may stop only a feature it started; it did not start 'playback'\n"
                                + "note saved\n"), "\(output)")
        #expect(try group.run(["probe", "feature", "playback"]).status == 0)
        #expect(try group.run(["probe", "feature", "recording"]).status == 1)
        let note = group.path + "/shared/keyboard-note"
        #expect(try String(contentsOfFile: note, encoding: .utf8) == "remember the milk")
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: note)[.posixPermissions] as? Int)
        #expect(mode == 0o600)
    }

    @Test func keyboardWithoutAHostStillProbesAndSaysWhatItCannotDo() throws {
        let group = try TestGroup()
        let holder = try group.startHold(["feature", "recording"], ["cat"])
        defer { holder.signal(SIGKILL) }
        #expect(try group.run(["watch", "feature", "recording", "--until", "running", "--timeout", "10"]).status == 0)
        let keyboard = try startByHand(group, "example-keyboard")
        keyboard.writeStdin("is recording running?\nstart camera\n")
        keyboard.closeStdin()
        #expect(try keyboard.waitForExit() == 0)
        let lines = try keyboard.remainingOutput().split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        // Without open access it attaches only when it starts (it is then
        // confined without Unix sockets), and says so.
        #expect(lines.first == "no host is running; carrying on without a host (a keyboard without open access started "
                + "by hand is confined without Unix sockets, so it attaches only when it starts: start it again to attach "
                + "to a new host)")
        #expect(lines.dropFirst().first?.hasPrefix("recording is running (pid ") == true)
        #expect(lines.last == "cannot start camera: host is not running")
    }
}

extension RawClient {
    /// The response with this id, skipping the host's notifications.
    func response(id: Int) -> String? {
        while let line = readLine() {
            if line.contains(#""id":\#(id)"#) { return line }
        }
        return nil
    }
}

/// Expects every one of `pids` to end, at most `seconds` in all.
func waitUntilGone(_ pids: [Int32], within seconds: Double) throws {
    let deadline = TestTimeout.deadline(after: seconds)
    for pid in pids {
        let ended = processEnded(pid, within: max(0, deadline.timeIntervalSinceNow) / TestTimeout.scale)
        #expect(ended, "pid \(pid) outlived its host by over \(seconds) s: \(ended ? "" : processState(pid))")
    }
}

/// What a process is doing, for a failure message: its stat line and wait channel.
func processState(_ pid: Int32) -> String {
    let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? "gone"
    let wchan = (try? String(contentsOfFile: "/proc/\(pid)/wchan", encoding: .utf8)) ?? "?"
    let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
    let signals = status.split(separator: "\n").filter { $0.hasPrefix("Sig") || $0.hasPrefix("Shd") }.joined(separator: " ")
    return "\(stat.prefix(120)) wchan=\(wchan) \(signals)"
}
