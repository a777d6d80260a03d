import Foundation
import Testing
import TetherTestSupport
import TetherIPC

/// `tether widget watch`: a widget's entry as a status bar reads it, line by
/// line, through reloads and a host restart, each line valid for its bar.
@Suite(.timed) struct WidgetWatchTests {
    /// A `bar-widget` (SDKFixture) named "bar", on demand unless said: it shows the
    /// defaults' `bar.*` keys.
    func barFixture(activation: String = "on-demand") throws -> HostFixture {
        let fixture = try HostFixture()
        let manifest = #"{"name":"bar","role":"widget","executable":"\#(exampleExecutable("SDKFixture"))","arguments":["bar-widget"],"activation":"\#(activation)"\#(activation == "on-demand" ? #","idleTimeout":300"# : "")}"#
        try writeFile("\(fixture.extensions)/bar.extension.json", manifest)
        return fixture
    }

    func watch(_ fixture: HostFixture, _ format: String = "waybar", name: String = "bar") throws -> TestProcess {
        try startTether(fixture.group.withGroup(["widget", "watch", name, "--format", format]))
    }

    /// One waybar line: a JSON object of waybar's keys only, `text` a string.
    func waybar(_ line: String) throws -> [String: Any] {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        #expect(Set(object.keys).isSubset(of: ["text", "tooltip", "class", "percentage", "alt"]), "\(line)")
        #expect(object["text"] is String, "\(line)")
        if let percentage = object["percentage"] { #expect(percentage is Int, "\(line)") }
        return object
    }

    /// The next line that is not the "empty" one (the widget launching).
    func nextShown(_ watcher: TestProcess) throws -> [String: Any] {
        for _ in 0..<3 {
            guard let line = try watcher.readLine() else { break }
            let object = try waybar(line)
            if object["class"] as? String != "empty" { return object }
        }
        throw TestTimeout(what: "a widget line with content")
    }

    /// The largest store (1 MiB, of the values that cost most once
    /// parsed: small numbers) is read by an SDK extension within the
    /// smallest role's memory limit (a keyboard's 96 MiB).
    @Test func theLargestStoreIsReadWithinTheSmallestRolesMemoryLimit() throws {
        let fixture = try HostFixture()
        let manifest = #"{"name":"bar","role":"widget","executable":"\#(exampleExecutable("SDKFixture"))","arguments":["bar-widget"],"activation":"on-demand","memoryLimitMiB":96}"#
        try writeFile("\(fixture.extensions)/bar.extension.json", manifest)
        #expect(try fixture.group.run(["defaults", "set", "bar.text", #""big""#]).status == 0)
        let value = "[" + Array(repeating: "0", count: 49_999).joined(separator: ",") + "]"
        for index in 0..<10 { #expect(try fixture.group.run(["defaults", "set", "filler\(index)", value]).status == 0) }
        try fixture.withHost { _ in
            let watcher = try watch(fixture)
            defer { watcher.stopAlways() }
            #expect(try nextShown(watcher)["text"] as? String == "big")
        }
    }

    @Test func theFirstLineComesAtOnceThenTheEntryWithItsTooltipClassAndPercentage() throws {
        let fixture = try barFixture()
        for (key, value) in [("bar.text", #""3 <b>builds</b> & more""#), ("bar.tooltip", #""queue: 3""#),
                             ("bar.state", #""warning""#), ("bar.fraction", "0.426")] {
            #expect(try fixture.group.run(["defaults", "set", key, value]).status == 0)
        }
        try fixture.withHost { _ in
            let watcher = try watch(fixture)
            defer { watcher.stopAlways() }
            // Within a second of starting: the host answers at once, before
            // the on-demand widget has shown anything.
            let first = try #require(try watcher.readLine(timeout: 1))
            _ = try waybar(first)
            let shown = try (first.contains("\"empty\"") ? nextShown(watcher) : waybar(first))
            // Markup in a widget's text is shown as written, never as markup.
            #expect(shown["text"] as? String == "3 &lt;b&gt;builds&lt;/b&gt; &amp; more")
            #expect(shown["tooltip"] as? String == "queue: 3")
            #expect(shown["class"] as? String == "warning")
            #expect(shown["percentage"] as? Int == 43)
        }
    }

    @Test func aReloadGivesALineOnlyWhenWhatIsShownChanged() throws {
        let fixture = try barFixture()
        #expect(try fixture.group.run(["defaults", "set", "bar.text", #""one""#]).status == 0)
        try fixture.withHost { host in
            let watcher = try watch(fixture, "text")
            defer { watcher.stopAlways() }
            try watcher.expectLine("one")
            // A reload that shows the same: the widget reloads, no line comes.
            #expect(try fixture.group.run(["reload", "bar"]).status == 0)
            try host.expectLineStarting("[bar] timeline (host): 1 entries")
            #expect(try fixture.group.run(["defaults", "set", "bar.text", #""two""#]).status == 0)
            // The next line is the change, not "one" again.
            #expect(try watcher.readLine() == "two")
        }
    }

    /// The widget killed: a line says it no longer runs (its entry kept),
    /// and its relaunch (the host restarts a widget it keeps running)
    /// gives another.
    @Test func aRelaunchGivesALine() throws {
        let fixture = try barFixture(activation: "always")
        #expect(try fixture.group.run(["defaults", "set", "bar.text", #""steady""#]).status == 0)
        try fixture.withHost { _ in
            let watcher = try watch(fixture, "json")
            defer { watcher.stopAlways() }
            func next(running: Bool) throws -> [String: Any] {
                for _ in 0..<4 {
                    let line = try #require(try watcher.readLine())
                    let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                    if object["running"] as? Bool == running, object["text"] as? String == "steady" { return object }
                }
                throw TestTimeout(what: "a line with running \(running)")
            }
            _ = try next(running: true)
            let extensions = try #require(try fixture.status()["extensions"] as? [[String: Any]])
            let pid = try #require(extensions.first { $0["name"] as? String == "bar" }?["pid"] as? Int)
            kill(Int32(pid), SIGKILL)
            #expect(try next(running: false)["online"] as? Bool == true)
            _ = try next(running: true)
        }
    }

    @Test func aHostRestartGivesAnOfflineLineThenTheContentAgain() throws {
        let fixture = try barFixture()
        #expect(try fixture.group.run(["defaults", "set", "bar.text", #""before""#]).status == 0)
        let watcher: TestProcess
        do {
            let host = try fixture.startHost()
            defer { host.stopAlways() }
            watcher = try watch(fixture)
            #expect(try nextShown(watcher)["text"] as? String == "before")
            host.signal(SIGTERM)
            #expect(try host.waitForExit(timeout: 20) == 0)
        }
        defer { watcher.stopAlways() }
        let offline = try waybar(try #require(try watcher.readLine()))
        #expect(offline["class"] as? String == "offline")
        // The last thing shown stays, marked offline, with why on hover.
        #expect(offline["text"] as? String == "before")
        #expect((offline["tooltip"] as? String)?.contains("not running") == true)

        #expect(try fixture.group.run(["defaults", "set", "bar.text", #""after""#]).status == 0)
        try fixture.withHost { _ in
            // The watch was not restarted: it found the new host itself.
            let shown = try nextShown(watcher)
            #expect(shown["text"] as? String == "after")
        }
    }

    /// A host reached as it dies takes the connection and closes it
    /// unanswered: that is the host going, not a refusal; the watch says
    /// offline and goes on to the next host. Here a stand-in holds the
    /// host's lock and closes every connection it takes.
    @Test func aHostThatClosesWithoutAnsweringIsNoReasonToStop() throws {
        let fixture = try barFixture()
        #expect(try fixture.group.run(["defaults", "set", "bar.text", #""back""#]).status == 0)
        try FileManager.default.createDirectory(atPath: fixture.group.path + "/locks", withIntermediateDirectories: true)
        // No fork: the process killed below is the one holding the lock.
        let lock = try TestProcess("flock", ["--no-fork", "-x", fixture.group.path + "/locks/host.lock", "-c", "echo held; exec sleep 300"])
        defer { lock.stopAlways() }
        try lock.expectLine("held")
        let closer = try TestProcess("python3", ["-c", """
            import socket
            s = socket.socket(socket.AF_UNIX)
            s.bind("\(fixture.group.path)/host.sock")
            s.listen(64)
            print("listening", flush=True)
            for _ in range(200):
                s.accept()[0].close()
                print("closed one", flush=True)
            """])
        defer { closer.stopAlways() }
        try closer.expectLine("listening")
        let watcher = try watch(fixture, "text")
        defer { watcher.stopAlways() }
        try watcher.expectLine("bar: offline (the Tether host is not running)")
        // It looked again and was closed again, and still runs.
        try closer.expectLine("closed one")
        try closer.expectLine("closed one")
        closer.signal(SIGKILL)
        lock.signal(SIGKILL)
        #expect(try closer.waitForExit() != 0)
        try fixture.withHost { _ in
            _ = try watcher.expectLine("back")
        }
    }

    /// What a widget started by hand showed is dropped once it has gone
    /// and its last watcher has too: names by hand are anyone's to make up,
    /// and an entry kept for a name nobody runs or watches would pile up
    /// with each new name. Seen here as the next widget of that name
    /// starting with nothing shown, not with what the gone one showed.
    @Test func aGoneWidgetByHandIsForgottenWhenItsLastWatcherGoes() throws {
        let fixture = try barFixture()
        func line(_ text: String) -> [UInt8] { Array(text.utf8) + [0x0a] }
        let hello = line(#"{"jsonrpc":"2.0","id":1,"method":"\#(HostMethod.hello)","params":{"name":"hand","role":"widget"}}"#)
        let watchHand = line(#"{"jsonrpc":"2.0","id":1,"method":"\#(HostMethod.widgetWatch)","params":{"name":"hand"}}"#)
        try fixture.withHost { host in
            let widget = try fixture.rawClient()
            widget.send(hello)
            #expect(widget.readLine()?.contains("\"result\"") == true)
            widget.send(line(#"{"jsonrpc":"2.0","id":2,"method":"\#(HostMethod.widgetEntry)","params":{"text":"old"}}"#))
            #expect(widget.readLine()?.contains("\"result\"") == true)
            let watcher = try fixture.rawClient()
            watcher.send(watchHand)
            #expect(watcher.readLine()?.contains("\"old\"") == true)
            // The widget goes while watched: its entry stays for the watcher.
            widget.close()
            try host.expectLineStarting("extension 'hand' detached")
            #expect(watcher.readLine()?.contains("\"running\":false") == true)
            // Then the watcher goes: nothing runs or watches "hand" now.
            watcher.close()

            let again = try fixture.rawClient()
            defer { again.close() }
            again.send(hello)
            #expect(again.readLine()?.contains("\"result\"") == true)
            let second = try fixture.rawClient()
            defer { second.close() }
            second.send(watchHand)
            let answer = try #require(second.readLine())
            #expect(answer.contains("\"entry\":null") && !answer.contains("old"), "\(answer)")
        }
    }

    /// A widget started by hand attaches to a new host only after that host
    /// is up: a watch that reaches the new host first waits for it (it was
    /// a widget's name), it does not end as for a name nobody ever ran.
    @Test func aWatchOfAWidgetByHandOutlivesAHostRestart() throws {
        let fixture = try barFixture()
        func line(_ text: String) -> [UInt8] { Array(text.utf8) + [0x0a] }
        let hello = line(#"{"jsonrpc":"2.0","id":1,"method":"\#(HostMethod.hello)","params":{"name":"hand","role":"widget"}}"#)
        func attach(_ text: String) throws -> RawClient {
            let widget = try fixture.rawClient()
            widget.send(hello)
            #expect(widget.readLine()?.contains("\"result\"") == true)
            widget.send(line(#"{"jsonrpc":"2.0","id":2,"method":"\#(HostMethod.widgetEntry)","params":{"text":"\#(text)"}}"#))
            #expect(widget.readLine()?.contains("\"result\"") == true)
            return widget
        }
        let watcher: TestProcess
        do {
            let host = try fixture.startHost()
            defer { host.stopAlways() }
            let widget = try attach("before")
            defer { widget.close() }
            watcher = try watch(fixture, "text", name: "hand")
            try watcher.expectLine("before")
            host.signal(SIGTERM)
            #expect(try host.waitForExit(timeout: 20) == 0)
        }
        defer { watcher.stopAlways() }
        try watcher.expectLine("hand: offline (the Tether host is not running)")
        try fixture.withHost { _ in
            // The new host is up before the widget: the watch waits for it.
            try watcher.expectLine("hand: nothing shown yet")
            let widget = try attach("after")
            defer { widget.close() }
            try watcher.expectLine("after")
        }
    }

    @Test func aWatchOfNoWidgetIsAClearErrorAndOnlyAWidgetTellsAnEntry() throws {
        let fixture = try barFixture()
        try fixture.addExtension("kb", role: "keyboard", script: "exec sleep 300")
        try fixture.withHost { _ in
            let unknown = try fixture.group.run(["widget", "watch", "nope"])
            #expect(unknown.status == 1)
            #expect(unknown.stderr.contains("no widget named 'nope'; the host's widgets: bar"), "\(unknown.stderr)")
            let keyboard = try fixture.group.run(["widget", "watch", "kb"])
            #expect(keyboard.status == 1)
            #expect(keyboard.stderr.contains("'kb' is a keyboard, not a widget"), "\(keyboard.stderr)")

            // A client, or an extension of another role, cannot put words on a bar.
            let client = try fixture.rawClient()
            defer { client.close() }
            let entry = Array(#"{"jsonrpc":"2.0","id":2,"method":"\#(HostMethod.widgetEntry)","params":{"text":"spoofed"}}"#.utf8) + [0x0a]
            client.send(entry)
            let answer = try #require(client.readLine())
            #expect(answer.contains("only an attached widget tells its entry"), "\(answer)")
            client.send(Array(#"{"jsonrpc":"2.0","id":1,"method":"\#(HostMethod.hello)","params":{"name":"raw-note","role":"notification"}}"#.utf8) + [0x0a])
            #expect(client.readLine()?.contains("\"result\"") == true)
            client.send(entry)
            let asOtherRole = try #require(client.readLine())
            #expect(asOtherRole.contains("only an attached widget tells its entry"), "\(asOtherRole)")
        }
    }
}
