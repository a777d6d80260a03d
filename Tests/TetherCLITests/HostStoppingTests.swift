import Foundation
import Testing
import TetherIPC
import TetherTestSupport

/// While the host stops (its state, not a flag), it answers but starts and
/// stops nothing more: each extension is already being stopped, once.
@Suite(.timed) struct HostStoppingTests {
    @Test func aStoppingHostAnswersButStartsAndStopsNothingMore() throws {
        let fixture = try HostFixture()
        // It ignores SIGTERM: the host's stop waits out its grace (long:
        // the checks below need no hurry), answering meanwhile.
        try writeFile(fixture.extensions + "/stubborn.extension.json", #"""
            {"name":"stubborn","role":"widget","executable":"/bin/sh","arguments":["-c","trap '' TERM; echo up; while :; do sleep 1; done"],"activation":"always","restart":"never"}
            """#)
        try writeFile(fixture.extensions + "/late.extension.json",
                      #"{"name":"late","role":"widget","executable":"/bin/sleep","arguments":["300"],"activation":"on-demand"}"#)
        let host = try startTether(fixture.group.withGroup(["host", "--extensions-dir", fixture.extensions, "--grace", "60"]))
        defer { host.signal(SIGKILL) }
        _ = try host.expectLineStarting("[stubborn] up")
        // Its process group, as the host sees it (its own pid in a world of its own is 1).
        let stubborn = try #require((try fixture.status()["extensions"] as? [[String: Any]])?
            .first { $0["name"] as? String == "stubborn" }?["pid"] as? Int)
        let client = try fixture.rawClient()
        defer { client.close() }
        host.signal(SIGTERM)
        // Every connection hears it once the way down has begun.
        #expect(client.readLine()?.contains(#""method":"\#(HostNotification.stopping)""#) == true)
        let stop = try fixture.group.run(["extension", "stop", "stubborn"])
        #expect(stop.status == 1 && stop.stderr.contains("the host is stopping every extension"), "\(stop.stderr)")
        let start = try fixture.group.run(["extension", "start", "late"])
        #expect(start.status == 1 && start.stderr.contains("cannot start"), "\(start.stderr)")
        // Ended from outside, its whole group: the stop waits no longer.
        try #require(stubborn > 1)
        #expect(kill(-Int32(stubborn), SIGKILL) == 0)
        #expect(try host.waitForExit(timeout: 30) == 0)
    }

    /// A launch's link hears the host stop once, in whichever turn the
    /// stop signals it: every other connection hears it at once, each
    /// launch as the stop signals it, 32 a turn of the loop (told all at
    /// once, thousands woke to read it before the first was signalled).
    /// The listener runs after 32 others, so its turn is the second.
    @Test func eachLaunchHearsTheHostStopOnceInItsTurn() throws {
        let fixture = try HostFixture()
        for index in 0..<32 {
            try writeFile(fixture.extensions + "/early\(index).extension.json",
                          #"{"name":"early\#(index)","role":"widget","executable":"/bin/sleep","arguments":["300"],"activation":"always","restart":"never"}"#)
        }
        // What its link says is read before a signal: both may wake the
        // same poll, and the host writes before it signals.
        try writeFile(fixture.extensions + "/listener.py", """
            import json, os, selectors, signal, socket
            wake, woken = os.pipe()
            os.set_blocking(woken, False)
            signal.set_wakeup_fd(woken)
            signal.signal(signal.SIGTERM, lambda *_: None)
            link = socket.socket(fileno=int(os.environ["TETHER_HOST_FD"]))
            link.sendall((json.dumps({"jsonrpc": "2.0", "id": 1, "method": "\(HostMethod.hello)",
                                      "params": {"name": "listener", "role": "widget"}}) + "\\n").encode())
            polled = selectors.DefaultSelector()
            polled.register(link, selectors.EVENT_READ)
            polled.register(wake, selectors.EVENT_READ)
            pending = b""
            while True:
                ready = [key.fileobj for key, _ in polled.select()]
                if link in ready:
                    data = link.recv(65536)
                    if not data:
                        break
                    *lines, pending = (pending + data).split(b"\\n")
                    for line in lines:
                        message = json.loads(line)
                        print("heard " + message["method"] if "method" in message else "attached", flush=True)
                    continue
                print("TERM", flush=True)
                break
            """)
        try writeFile(fixture.extensions + "/listener.extension.json",
                      #"{"name":"listener","role":"widget","executable":"/usr/bin/env","arguments":["python3","\#(fixture.extensions)/listener.py"],"activation":"always","restart":"never"}"#)
        let host = try startTether(fixture.group.withGroup(["host", "--extensions-dir", fixture.extensions]))
        defer { host.signal(SIGKILL) }
        _ = try host.expectLineStarting("[listener] attached")
        let pids = ((try fixture.status()["extensions"] as? [[String: Any]]) ?? []).compactMap { ($0["pid"] as? Int).flatMap { Int32(exactly: $0) } }
        #expect(pids.count == 33, "\(pids.count) running")
        let client = try fixture.rawClient()
        defer { client.close() }
        host.signal(SIGTERM)
        #expect(client.readLine()?.contains(#""method":"\#(HostNotification.stopping)""#) == true)
        let seen = try host.expectLineStarting("[listener] TERM").filter { $0.hasPrefix("[listener] heard") }
        #expect(seen == ["[listener] heard \(HostNotification.stopping)"])
        #expect(try host.waitForExit(timeout: 30) == 0)
        try waitUntilGone(pids, within: 10)
    }
}
