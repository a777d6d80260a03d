import Foundation
import Testing
import TetherTestSupport
import TetherIPC

/// The host's connections at scale (issue 43): links are not clients, events
/// go to subscribers only, a peer's work in flight is bounded.
@Suite(.timed) struct HostConnectionsTests {
    static func request(_ id: Int, _ method: String, _ params: String = "{}") -> [UInt8] {
        Array(#"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)","params":\#(params)}"#.utf8) + [0x0a]
    }

    @Test func onlySubscribersHearOfChangesAndNoExtensionHearsOfAnother() throws {
        let fixture = try HostFixture()
        try fixture.withHost { host in
            let quiet = try fixture.rawClient()
            defer { quiet.close() }
            let listener = try fixture.rawClient()
            defer { listener.close() }
            listener.send(Self.request(1, HostMethod.subscribe, #"{"events":["\#(HostNotification.extensionChanged)"]}"#))
            #expect(listener.readLine()?.contains(#""result":{"events":["\#(HostNotification.extensionChanged)"]}"#) == true)

            let first = try fixture.rawClient()
            defer { first.close() }
            first.send(Self.request(1, HostMethod.hello, #"{"name":"first","role":"widget","protocol":2}"#))
            #expect(first.readLine()?.contains(#""hostPid""#) == true, "the hello's answer is its first line")
            let second = try fixture.rawClient()
            second.send(Self.request(1, HostMethod.hello, #"{"name":"second","role":"widget","protocol":2}"#))
            #expect(second.readLine()?.contains(#""hostPid""#) == true)
            second.close()

            // The subscriber hears all three changes, in order.
            let heard = (0..<3).compactMap { _ in listener.readLine() }
            #expect(heard.count == 3 && heard.allSatisfy { $0.contains(#""method":"\#(HostNotification.extensionChanged)""#) }, "\(heard)")
            #expect(heard.first?.contains(#""name":"first""#) == true && heard.last?.contains(#""attached":false"#) == true)

            // A client and an extension that asked for nothing heard nothing:
            // the next line each reads is the answer to its ping.
            quiet.send(Self.request(7, HostMethod.ping))
            #expect(quiet.readLine()?.contains(#""id":7"#) == true)
            first.send(Self.request(7, HostMethod.ping))
            #expect(first.readLine()?.contains(#""id":7"#) == true)

            // An event no host has is refused with the list.
            quiet.send(Self.request(8, HostMethod.subscribe, #"{"events":["everything"]}"#))
            let refused = try #require(quiet.readLine())
            #expect(refused.contains("-32602") && refused.contains("extension.changed, feature.changed, store.changed"), "\(refused)")
        }
    }

    /// Extensions' links never count toward the client limit: a host at
    /// --max-connections 1 with three extensions running answers every
    /// client. When its one client slot is busy, the CLI says so and how
    /// to raise it, in one line.
    @Test func linksAreNotClientsAndARefusalIsToldWithItsFix() throws {
        let fixture = try HostFixture()
        for name in ["one", "two", "three"] { try fixture.addExtension(name, script: helloScript) }
        try writeFile(fixture.extensions + "/lazy.sh", "#!/bin/sh\nexec sleep 300\n", mode: 0o755)
        try writeFile(fixture.extensions + "/lazy.extension.json",
                      #"{"name":"lazy","role":"widget","executable":"lazy.sh","activation":"on-demand"}"#)
        try fixture.withHost(arguments: ["--max-connections", String(1)], environment: fixture.group.environment) { host in
            var started = 0
            while started < 3, let line = try host.readLine() {
                if line.contains("hello from ") { started += 1 }
            }
            #expect(started == 3)
            for _ in 0..<2 {
                let status = try fixture.group.run(["status"])
                #expect(status.status == 0, "\(status.stderr)")
            }

            // The one client slot, busy: waiting for a hello that never comes.
            let busy = try fixture.rawClient()
            defer { busy.close() }
            busy.send(Self.request(1, HostMethod.extensionStart, #"{"name":"lazy"}"#))
            _ = try host.expectLineStarting("extension 'lazy' started (pid ")
            let refused = try fixture.group.run(["status"])
            #expect(refused.status == 1)
            #expect(refused.stderr.trimmingCharacters(in: .whitespacesAndNewlines)
                == "tether: the host is at its limit of 1 client connections (start it with --max-connections to allow more)",
                "\(refused.stderr)")
        }
    }

    /// A widget the host launched watches nothing itself: the host tells
    /// it when the group's defaults are replaced (`store.changed`), and it
    /// reloads as one started by hand does.
    @Test func aLaunchedWidgetHearsOfDefaultsFromTheHost() throws {
        let fixture = try HostFixture()
        try writeFile("\(fixture.extensions)/clock.extension.json", #"""
            {"name":"clock","role":"widget","executable":"\#(exampleExecutable("example-widget"))","arguments":["--entries","1","--policy","never"],"activation":"always"}
            """#)
        try fixture.withHost { host in
            // Attached (so it asked for store.changed) and shown, in either order.
            var seen: Set<String> = []
            while seen.count < 2, let line = try host.readLine(timeout: 20) {
                if line.hasPrefix("[clock] timeline (start)") { seen.insert("start") }
                if line == "[clock] attached to host pid \(host.pid)" { seen.insert("attached") }
            }
            #expect(seen.count == 2)
            #expect(try fixture.group.run(["defaults", "set", "orders.url", #""http://127.0.0.1:9/orders""#]).status == 0)
            _ = try host.expectLineStarting("[clock] timeline (defaults)")
        }
    }
}
