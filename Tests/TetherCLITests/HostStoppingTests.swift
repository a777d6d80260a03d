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

    /// A launch's link hears the host stop once, and before its SIGTERM:
    /// every other connection hears it at once, each launch as the stop
    /// signals it (a few a turn of the loop, so thousands are not all woken
    /// to read it before the first is signalled).
    @Test func eachLaunchHearsTheHostStopOnceBeforeItsSIGTERM() throws {
        let fixture = try HostFixture()
        // What its link says before a signal is read first: both wake the
        // same poll, and the link's bytes were sent before the signal.
        let listener = """
            import json, os, selectors, signal, socket
            wake, woken = os.pipe()
            os.set_blocking(woken, False)
            signal.set_wakeup_fd(woken)
            signal.signal(signal.SIGTERM, lambda *_: None)
            link = socket.socket(fileno=int(os.environ['TETHER_HOST_FD']))
            link.sendall((json.dumps({'jsonrpc': '2.0', 'id': 1, 'method': 'extension.hello',
                'params': {'name': os.environ['TETHER_EXTENSION'], 'role': 'widget'}}) + '\\n').encode())
            polled = selectors.DefaultSelector()
            polled.register(link, selectors.EVENT_READ)
            polled.register(wake, selectors.EVENT_READ)
            pending = b''
            while True:
                ready = [key.fileobj for key, _ in polled.select()]
                if link in ready:
                    data = link.recv(65536)
                    if not data:
                        break
                    *lines, pending = (pending + data).split(b'\\n')
                    for line in lines:
                        message = json.loads(line)
                        print('heard ' + message['method'] if 'method' in message else 'attached', flush=True)
                    continue
                print('TERM', flush=True)
                break
            """
        let manifest: [String: Any] = ["name": "listener", "role": "widget", "executable": "/usr/bin/python3",
                                       "arguments": ["-c", listener], "activation": "always", "restart": "never"]
        try JSONSerialization.data(withJSONObject: manifest).write(to: URL(fileURLWithPath: fixture.extensions + "/listener.extension.json"))
        let host = try startTether(fixture.group.withGroup(["host", "--extensions-dir", fixture.extensions]))
        defer { host.signal(SIGKILL) }
        _ = try host.expectLineStarting("[listener] attached")
        let client = try fixture.rawClient()
        defer { client.close() }
        host.signal(SIGTERM)
        #expect(client.readLine()?.contains(#""method":"\#(HostNotification.stopping)""#) == true)
        let seen = try host.expectLineStarting("[listener] TERM").filter { $0.hasPrefix("[listener] heard") }
        #expect(seen == ["[listener] heard \(HostNotification.stopping)"])
        #expect(try host.waitForExit(timeout: 30) == 0)
    }
}
