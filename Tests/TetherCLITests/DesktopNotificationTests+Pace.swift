import Foundation
import Testing
import TetherIPC
import TetherTestSupport

extension DesktopNotificationTests {
    /// An extension's pushes reach the desktop at its pace: five at once,
    /// then one every two seconds; the rest are answered "coalesced" and
    /// shown as one summary, the latest with how many came with it. The
    /// user's pushes go as sent.
    @Test func anExtensionsFloodIsCoalescedIntoOneSummary() throws {
        let fixture = try HostFixture()
        let desktop = try DesktopSession()
        try writeFile(fixture.extensions + "/flood.py", """
            import json, os, socket
            link = socket.socket(fileno=int(os.environ["TETHER_HOST_FD"]))
            lines = link.makefile("r")
            def call(id, method, params):
                link.sendall((json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params}) + "\\n").encode())
                for line in lines:
                    answer = json.loads(line)
                    if answer.get("id") == id: return answer
            call(0, "\(HostMethod.hello)", {"name": "flood", "role": "widget"})
            shown = []
            for i in range(12):
                answer = call(i + 1, "\(HostMethod.push)", {"payload": {"title": "n%d" % i, "urgency": "critical"}})
                shown.append(answer["result"]["desktop"].get("shown"))
            print("shown", sum(1 for s in shown if s), flush=True)
            for line in lines: pass
            """)
        try writeFile(fixture.extensions + "/flood.extension.json",
                      #"{"name":"flood","role":"widget","executable":"/usr/bin/env","arguments":["python3","\#(fixture.extensions)/flood.py"],"activation":"on-demand"}"#)
        try withDesktopHost(fixture, desktop) { host in
            _ = try fixture.group.run(["extension", "start", "flood"], timeout: 30)
            #expect(try host.expectLineStarting("[flood] shown", timeout: 30).last == "[flood] shown 5")
            // The summary, on its turn: the latest, and the six more.
            var summary: [String: Any]?
            try waitFor("the summary on the desktop", timeout: 20) {
                try? desktop.closeAll()
                summary = (try? desktop.history())?.first { $0["summary"] as? String == "n11" }
                return summary != nil
            }
            let body = try #require(summary?["body"] as? String)
            #expect(body == "(and 6 more from flood, coalesced)", "\(body)")
            #expect(try desktop.history().count == 6)
            // The user's own pushes are not paced.
            for index in 0..<7 { #expect(try push(fixture, #"{"title":"mine \#(index)"}"#).notification != nil) }
        }
    }
}
