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
        // A sibling that attaches (says hello on its link), then waits.
        try writeFile(fixture.extensions + "/steady.py", """
            import json, os, socket
            link = socket.socket(fileno=int(os.environ["TETHER_HOST_FD"]))
            link.sendall((json.dumps({"jsonrpc": "2.0", "id": 1, "method": "\(HostMethod.hello)",
                                      "params": {"name": "steady", "role": "widget"}}) + "\\n").encode())
            for line in link.makefile("r"): pass
            """)
        try writeFile(fixture.extensions + "/steady.extension.json",
                      #"{"name":"steady","role":"widget","executable":"/usr/bin/env","arguments":["python3","\#(fixture.extensions)/steady.py"],"activation":"always"}"#)
        try writeFile(fixture.extensions + "/peek.py", """
            import json, os, socket, sys
            link = socket.socket(fileno=int(os.environ["TETHER_HOST_FD"]))
            lines = link.makefile("r")
            def call(id, method, params={}):
                link.sendall((json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params}) + "\\n").encode())
                for line in lines:
                    answer = json.loads(line)
                    if answer.get("id") == id: return answer
            call(1, "\(HostMethod.hello)", {"name": "peek", "role": "widget", "events": ["\(HostNotification.extensionChanged)"]})
            status = call(2, "\(HostMethod.status)")["result"]
            listed = call(3, "\(HostMethod.extensionList)")["result"]
            metrics = call(4, "\(HostMethod.metrics)")
            print("seen", ",".join(e["name"] for e in status["extensions"]), ",".join(e["name"] for e in listed),
                  metrics.get("error", {}).get("message", "answered"), flush=True)
            with open(sys.argv[1]) as gate: gate.readline()
            # What it heard of others meanwhile came before this answer.
            heard = []
            link.sendall((json.dumps({"jsonrpc": "2.0", "id": 5, "method": "\(HostMethod.ping)"}) + "\\n").encode())
            for line in lines:
                message = json.loads(line)
                if message.get("id") == 5: break
                if message.get("method") == "\(HostNotification.extensionChanged)": heard.append(message["params"]["name"])
            print("heard", ",".join(heard), flush=True)
            for line in lines: pass
            """)
        try writeFile(fixture.extensions + "/peek.extension.json",
                      #"{"name":"peek","role":"widget","executable":"/usr/bin/env","arguments":["python3","\#(fixture.extensions)/peek.py","\#(fixture.extensions)/gate"],"activation":"on-demand"}"#)
        #expect(mkfifo(fixture.extensions + "/gate", 0o600) == 0)
        try fixture.withHost { host in
            _ = try host.expectLineStarting("extension 'steady' started").last ?? ""
            #expect(try fixture.group.run(["extension", "start", "peek"], timeout: 30).status == 0)
            let seen = try host.expectLineStarting("[peek] seen", timeout: 30).last ?? ""
            #expect(seen == "[peek] seen peek peek 'peek' is an extension; the host's metrics are the user's to read (tether metrics)",
                    "\(seen)")
            // Another extension's end and start are not its to hear.
            #expect(try fixture.group.run(["extension", "stop", "steady"], timeout: 30).status == 0)
            #expect(try fixture.group.run(["extension", "start", "steady"], timeout: 30).status == 0)
            let gate = open(fixture.extensions + "/gate", O_RDWR)
            #expect(gate >= 0)
            defer { close(gate) }
            #expect(write(gate, "go\n", 3) == 3)
            #expect(try host.expectLineStarting("[peek] heard", timeout: 30).last == "[peek] heard ", "it heard of another extension")
            // The user sees both, and the metrics.
            let status = try fixture.group.run(["status", "--json"])
            #expect(status.stdout.contains(#""name":"steady""#) && status.stdout.contains(#""name":"peek""#), "\(status.stdout)")
            #expect(try fixture.group.run(["metrics"]).status == 0)
        }
    }
}
