import Foundation
import Testing
import TetherIPC
import TetherTestSupport

/// An extension sees its own status; the others' (their exits, their
/// processes) are the user's to read: `host.status` and `extension.list`
/// on its link list only itself, and `host.metrics` is refused. The same
/// calls by the user see every extension.
@Suite(.timed) struct StatusByNeedTests {
    @Test func anExtensionSeesOnlyItsOwnStatus() throws {
        let fixture = try HostFixture()
        try fixture.addExtension("steady", script: "exec sleep 300")
        try writeFile(fixture.extensions + "/peek.py", """
            import json, os, socket, sys
            link = socket.socket(fileno=int(os.environ["TETHER_HOST_FD"]))
            lines = link.makefile("r")
            def call(id, method, params={}):
                link.sendall((json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params}) + "\\n").encode())
                for line in lines:
                    answer = json.loads(line)
                    if answer.get("id") == id: return answer
            call(1, "\(HostMethod.hello)", {"name": "peek", "role": "widget"})
            status = call(2, "\(HostMethod.status)")["result"]
            listed = call(3, "\(HostMethod.extensionList)")["result"]
            metrics = call(4, "\(HostMethod.metrics)")
            print("seen", ",".join(e["name"] for e in status["extensions"]), ",".join(e["name"] for e in listed),
                  metrics.get("error", {}).get("message", "answered"), flush=True)
            for line in lines: pass
            """)
        try writeFile(fixture.extensions + "/peek.extension.json",
                      #"{"name":"peek","role":"widget","executable":"/usr/bin/env","arguments":["python3","\#(fixture.extensions)/peek.py"],"activation":"on-demand"}"#)
        try fixture.withHost { host in
            _ = try host.expectLineStarting("extension 'steady' started").last ?? ""
            #expect(try fixture.group.run(["extension", "start", "peek"], timeout: 30).status == 0)
            let seen = try host.expectLineStarting("[peek] seen", timeout: 30).last ?? ""
            #expect(seen == "[peek] seen peek peek 'peek' is an extension; the host's metrics are the user's to read (tether metrics)",
                    "\(seen)")
            // The user sees both, and the metrics.
            let status = try fixture.group.run(["status", "--json"])
            #expect(status.stdout.contains(#""name":"steady""#) && status.stdout.contains(#""name":"peek""#), "\(status.stdout)")
            #expect(try fixture.group.run(["metrics"]).status == 0)
        }
    }
}
