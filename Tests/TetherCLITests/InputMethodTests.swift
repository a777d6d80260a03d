import Foundation
import Testing
import TetherTestSupport

/// Keyboards as input methods on a desktop of the test's own (Xvfb, a
/// private bus, ibus-daemon, GTK3 entries, keys from xdotool): the example
/// keyboard's shortcut, a password's keys kept from every keyboard, hostile
/// keyboards that cost the typist nothing, and a daemon restarted.
@Suite(.timed) struct InputMethodTests {
    /// A host whose extension `name` is `manifest`'s keyboard, attached and
    /// registered as an engine, selected in `session`.
    func withKeyboardHost<T>(_ session: InputMethodSession, name: String, executable: String, arguments: [String] = [],
                             extra: String = "", attached: Bool = true,
                             _ body: (HostFixture, TestProcess) throws -> T) throws -> T {
        let fixture = try HostFixture()
        let list = arguments.map { "\"\($0)\"" }.joined(separator: ",")
        try writeFile("\(fixture.extensions)/\(name).extension.json",
                      #"{"name":"\#(name)","role":"keyboard","executable":"\#(executable)","arguments":[\#(list)]\#(extra)}"#)
        // The session's HOME and display: the host finds the test's ibus-daemon, and no other.
        var environment = session.environment
        environment["IBUS_ADDRESS"] = ""
        return try fixture.withHost(environment: environment) { host in
            var missing = ["input method: IBus engines tether:\(name)"] + (attached ? ["extension '\(name)' attached"] : [])
            while !missing.isEmpty {
                let line = try #require(try host.readLine(timeout: 30), "the host ended before saying \(missing)")
                missing.removeAll { line.hasPrefix($0) }
            }
            try session.select("tether:\(name)")
            return try body(fixture, host)
        }
    }

    /// Types `prefix` and the `;rec ` shortcut into a new entry, until the
    /// keyboard answers the shortcut's space within its 100 ms (at most 3
    /// entries: on a loaded machine a key can miss its deadline, and then
    /// goes to the application as typed, which the entry shows); the entry.
    func typeShortcut(_ session: InputMethodSession, _ prefix: String, expecting expected: String) throws -> EntryWindow {
        var missed: [String] = []
        for _ in 0..<3 {
            let entry = try session.entry()
            try entry.type(prefix + ";rec ")
            let text = try entry.waitForTitle { $0 == prefix + expected || $0 == prefix + ";rec " }
            if text == prefix + expected { return entry }
            missed.append(try entry.close())
        }
        throw TestTimeout(what: "the shortcut answered within its deadline in 3 entries (they held \(missed))")
    }

    /// The Swift example and the Python one (no SDK: the keyboard's
    /// messages in JSON) type the same.
    @Test(arguments: ["swift", "python"])
    func theExampleKeyboardTypesTheRecordingStateIntoAGTKEntry(_ language: String) throws {
        let session = try InputMethodSession()
        let python = Repository.path("examples/python-keyboard/keyboard.py")
        try withKeyboardHost(session, name: "kb", executable: language == "swift" ? exampleExecutable("example-keyboard") : python) {
            fixture, _ in
            let entry = try typeShortcut(session, "hi ", expecting: "recording off ")
            // The app's recording runs: the same shortcut says so.
            let recording = try startTether(fixture.group.withGroup(["hold", "feature", "recording", "--", "sleep", "600"]),
                                            environment: fixture.group.environment)
            defer { recording.stopAlways() }
            try waitFor("the recording feature", timeout: 20) {
                (try? fixture.group.run(["probe", "feature", "recording"]))?.status == 0
            }
            #expect(try entry.close() == "hi recording off ", "nothing typed twice after the last look")
            let running = try typeShortcut(session, "ok ", expecting: "recording on ")
            #expect(try running.close() == "ok recording on ")
        }
    }

    /// A password entry's keys go to it unchanged and no keyboard hears of
    /// them; an ordinary entry's do, with at most 300 characters of context.
    @Test func aPasswordEntryKeepsItsKeysFromTheKeyboard() throws {
        let session = try InputMethodSession()
        try withKeyboardHost(session, name: "logger", executable: exampleExecutable("SDKFixture"),
                             arguments: ["key-logging-keyboard"]) { _, host in
            let password = try session.entry(password: true)
            try password.type("pw;rec ")
            try password.waitForText("pw;rec ")
            #expect(try password.close() == "pw;rec ")
            let entry = try session.entry()
            try entry.type(String(repeating: "a", count: 310), delay: 2)
            try entry.waitForText(String(repeating: "a", count: 310))
            // Alone, so it is not behind keys that ran out of time on a loaded machine.
            try entry.type("b")
            try entry.waitForText(String(repeating: "a", count: 310) + "b")
            var keys: [String] = []
            while keys.last?.contains("key 'b'") != true {
                let line = try #require(try host.readLine(timeout: 30), "the keyboard never said key 'b'")
                if line.hasPrefix("[logger] key ") { keys.append(line) }
            }
            #expect(keys.allSatisfy { !$0.contains("'p'") && !$0.contains("'w'") && !$0.contains("';'") },
                    "none of the password's keys: \(keys.prefix(3))")
            #expect(keys.first?.contains("in a text field after '' (0 characters)") == true, "\(keys.first ?? "")")
            #expect(keys.last?.hasSuffix("(300 characters)") == true, "the context is capped: \(keys.last ?? "")")
        }
    }

    /// A client that sends a password field's keys (GTK3 sends none; other
    /// toolkits may): the host gives them back unhandled, and the keyboard
    /// hears of none; the same client's ordinary field's keys reach it.
    @Test func aPasswordsKeysSentByAnyClientNeverReachTheKeyboard() throws {
        let session = try InputMethodSession()
        try withKeyboardHost(session, name: "logger", executable: exampleExecutable("SDKFixture"),
                             arguments: ["key-logging-keyboard"]) { _, host in
            #expect(try session.clientKeys("tether:logger", purpose: 8, "pw") == "00")
            #expect(try session.clientKeys("tether:logger", purpose: 9, "12") == "00", "a PIN's")
            #expect(try session.clientKeys("tether:logger", purpose: 0, "ok") == "00", "the logger takes no key")
            var keys: [String] = []
            while keys.last?.contains("key 'k'") != true {
                let line = try #require(try host.readLine(timeout: 30), "the keyboard never said key 'k'")
                if line.hasPrefix("[logger] key ") { keys.append(line) }
            }
            #expect(keys.count == 2 && keys[0].contains("key 'o' in a text field"), "\(keys)")
        }
    }

    /// A keyboard that answers late, one that dies mid-word, one that floods
    /// a key with insertions: the application gets every key once, in order.
    @Test(arguments: ["late-keyboard", "silent-keyboard", "crashing-keyboard", "flooding-keyboard"])
    func aHostileKeyboardCostsTheTypistNothing(_ behaviour: String) throws {
        let session = try InputMethodSession()
        try withKeyboardHost(session, name: "hostile", executable: exampleExecutable("SDKFixture"),
                             arguments: [behaviour]) { _, _ in
            let entry = try session.entry()
            try entry.type("hello world")
            try entry.waitForText("hello world")
            #expect(try entry.close() == "hello world")
        }
    }

    /// An on-demand keyboard is launched when a field takes focus, ready
    /// for the first key; it ends when idle, and the next key launches it.
    @Test func anOnDemandKeyboardIsLaunchedAtFocusAndEndsWhenIdle() throws {
        let session = try InputMethodSession()
        try withKeyboardHost(session, name: "kb", executable: exampleExecutable("example-keyboard"),
                             extra: #","activation":"on-demand","idleTimeout":1"#, attached: false) { _, host in
            // A field's focus launches it.
            _ = try session.entry()
            _ = try host.expectLineStarting("extension 'kb' attached", timeout: 30)
            let entry = try typeShortcut(session, "hi ", expecting: "recording off ")
            _ = try host.expectLineStarting("extension 'kb' ended (idle)", timeout: 30)
            // Keys while it is down go to the application; one launches it.
            try entry.type("x")
            try entry.waitForText("hi recording off x")
            _ = try host.expectLineStarting("extension 'kb' attached", timeout: 30)
            _ = try typeShortcut(session, "y ", expecting: "recording off ")
        }
    }

    /// ibus-daemon restarted (a new login, a crash): the host registers its
    /// engines with the new one, and the keyboard types again.
    @Test func aRestartedDaemonGetsTheEnginesAgain() throws {
        let session = try InputMethodSession()
        try withKeyboardHost(session, name: "kb", executable: exampleExecutable("example-keyboard")) { fixture, host in
            var environment = fixture.group.environment.merging(session.environment) { $1 }
            environment["IBUS_ADDRESS"] = ""
            let doctor = try tether(fixture.group.withGroup(["doctor"]), environment: environment)
            #expect(doctor.stdout.contains("ibus      yes  ibus-daemon answers at unix:"), "\(doctor.stdout)")
            try session.stopDaemon()
            _ = try host.expectLineStarting("input method: not reachable: no ibus-daemon answers")
            #expect(try fixture.group.run(["status"]).stdout.contains("input method: not reachable"))
            let without = try tether(fixture.group.withGroup(["doctor"]), environment: environment).stdout
            #expect(without.contains("ibus      no   keyboards are no input method") && without.contains("fix: start IBus"),
                    "\(without)")
            try session.startDaemon()
            _ = try host.expectLineStarting("input method: IBus engines tether:kb")
            try session.select("tether:kb")
            _ = try typeShortcut(session, "x ", expecting: "recording off ")
        }
    }
}
