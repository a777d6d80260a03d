import Foundation
import Testing
import TetherTestSupport
import TetherIPC

/// A launched extension speaks through the link its host handed it at
/// spawn, and only as itself: a child of a keyboard (which can neither
/// leave its process group nor make a Unix socket) cannot say hello on
/// that link as the idle notification extension (and get its pushes) or as
/// a new name with open access, while the real one still gets its push;
/// from outside any launch, no hello takes the name of an extension the
/// host is running, or claims open access its manifest denies. Each
/// refusal is logged.
@Suite(.timed) struct ImpersonationTests {
    /// The Python example, the real notification extension.
    static let pythonNotification = Repository.path("examples/python-notification/notify.py")

    /// Says hello on the socket with `params`; the answer's line (at most
    /// ten lines read, each within the client's timeout).
    static func hello(_ client: RawClient, _ params: String) -> String {
        client.send(Array(#"{"jsonrpc":"2.0","id":1,"method":"\#(HostMethod.hello)","params":\#(params)}"#.utf8) + [0x0a])
        for _ in 0..<10 {
            let answer = client.readLine() ?? ""
            if answer.contains(#""id":1"#) { return answer }
        }
        return ""
    }

    @Test func aLaunchSpeaksOnlyThroughItsLinkAndOnlyAsItself() throws {
        let fixture = try HostFixture()
        try writeFile(fixture.extensions + "/impostor.py", """
            import json, os, socket, subprocess, sys
            fd = int(os.environ["TETHER_HOST_FD"])
            if len(sys.argv) == 1:  # the extension: its child speaks
                sys.exit(subprocess.run([sys.executable, sys.argv[0], "child"], pass_fds=[fd]).returncode)
            link = socket.socket(fileno=fd)
            lines = link.makefile("r")
            def hello(id, name, open_access):
                link.sendall((json.dumps({"jsonrpc": "2.0", "id": id, "method": "\(HostMethod.hello)",
                    "params": {"name": name, "role": "notification", "openAccess": open_access, "protocol": 2}}) + "\\n").encode())
                for line in lines:
                    answer = json.loads(line)
                    if answer.get("id") == id: return "ok" if "result" in answer else "refused"
            def refused(action):
                try:
                    action(); return "done"
                except PermissionError:
                    return "refused"
            print("unix", refused(lambda: socket.socket(socket.AF_UNIX).close()), "setsid", refused(os.setsid),
                  "notify", hello(1, "notify", False), "ghost", hello(2, "ghost", True), "kb", hello(3, "kb", False), flush=True)
            for line in lines: pass
            """)
        try writeFile(fixture.extensions + "/kb.extension.json", #"{"name":"kb","role":"keyboard","executable":"/usr/bin/env","arguments":["python3","\#(fixture.extensions)/impostor.py"],"activation":"always","restart":"never"}"#)
        try writeFile(fixture.extensions + "/notify.extension.json", #"{"name":"notify","role":"notification","executable":"/usr/bin/env","arguments":["python3","\#(Self.pythonNotification)"],"activation":"on-demand"}"#)
        try fixture.withHost { host in
            let line = try #require(try host.expectLineStarting("[kb] unix", timeout: 30).last)
            #expect(line == "[kb] unix refused setsid refused notify refused ghost refused kb ok", "\(line)")
            try host.waitForError(containing: "extension 'kb' said hello as 'notify' over its link; refused")
            try host.waitForError(containing: "extension 'kb' said hello as 'ghost' over its link; refused")
            // The real one is launched for the push and gets it.
            let push = try fixture.group.json(try fixture.group.run(["push", "--json", #"{"title":"Hi"}"#], timeout: 30))
            let delivered = try #require((push["delivered"] as? [[String: Any]])?.first)
            #expect(delivered["extension"] as? String == "notify")
            #expect((delivered["content"] as? [String: Any])?["title"] as? String == "[python] Hi", "\(push)")
            let kb = (try fixture.status()["extensions"] as? [[String: Any]])?.first { $0["name"] as? String == "kb" }
            #expect(kb?["attached"] as? Bool == true, "\(kb ?? [:])")
        }
    }

    /// From outside any launch: the name of an extension the host has
    /// launched (not yet attached) is taken, and the real one still attaches
    /// through its link and gets its push.
    @Test func aHelloAsAnExtensionTheHostRunsIsRefused() throws {
        let fixture = try HostFixture()
        let gate = fixture.extensions + "/gate"  // beside its manifest: in its world too
        #expect(mkfifo(gate, 0o600) == 0)
        // It waits at the gate before its hello.
        // The script beside its manifest too: what its world shows.
        try FileManager.default.copyItem(atPath: Self.pythonNotification, toPath: fixture.extensions + "/notification.py")
        try writeFile(fixture.extensions + "/notify.sh", "#!/bin/sh\nread line < '\(gate)'\nexec python3 '\(fixture.extensions)/notification.py'\n", mode: 0o755)
        try writeFile(fixture.extensions + "/notify.extension.json", #"{"name":"notify","role":"notification","executable":"notify.sh","activation":"always","restart":"never"}"#)
        try fixture.withHost { host in
            let started = try #require(try host.expectLineStarting("extension 'notify' started (pid ", timeout: 15).last)
            let client = try fixture.rawClient()
            defer { client.close() }
            let answer = Self.hello(client, #"{"name":"notify","role":"notification","protocol":2}"#)
            #expect(answer.contains("extension 'notify' is running (pid "), "\(answer) after \(started)")
            try host.waitForError(containing: "said hello as 'notify', which this host runs (pid ")
            // Open the gate: read-write never blocks, and the line waits in the
            // pipe for the reader while this end stays open.
            let writer = open(gate, O_RDWR)
            #expect(writer >= 0)
            defer { close(writer) }
            #expect(write(writer, "go\n", 3) == 3)
            _ = try host.expectLineStarting("extension 'notify' attached (pid ", timeout: 30)
            let push = try fixture.group.json(try fixture.group.run(["push", "--json", #"{"title":"Hi"}"#], timeout: 30))
            let delivered = try #require((push["delivered"] as? [[String: Any]])?.first)
            #expect((delivered["content"] as? [String: Any])?["title"] as? String == "[python] Hi", "\(push)")
        }
    }

    /// The host could launch it: an idle on-demand extension's name is not
    /// for a process the host did not launch (a hand-started keyboard once
    /// took it and got the user's push), unless that process holds its
    /// instance lock (`ExtensionTests.oneInstanceOnly`, and
    /// `aHandStartedInstanceHoldingItsLockAttachesUnderAnOnDemandName`). The
    /// real one is launched for the push and gets it.
    @Test func aHelloAsAnIdleExtensionTheHostCouldLaunchIsRefused() throws {
        let fixture = try HostFixture()
        try writeFile(fixture.extensions + "/notify.extension.json", #"{"name":"notify","role":"notification","executable":"/usr/bin/env","arguments":["python3","\#(Self.pythonNotification)"],"activation":"on-demand"}"#)
        try fixture.withHost { host in
            let client = try fixture.rawClient()
            defer { client.close() }
            let answer = Self.hello(client, #"{"name":"notify","role":"notification","protocol":2,"timeBudgetMilliseconds":1000}"#)
            #expect(answer.contains("extension 'notify' is this host's to launch; a process the host did not launch "
                                    + "may attach as it only while holding its instance lock"), "\(answer)")
            try host.waitForError(containing: "said hello as 'notify', which this host launches itself, without holding its instance lock; refused")
            let push = try fixture.group.json(try fixture.group.run(["push", "--json", #"{"title":"Your code"}"#], timeout: 30))
            let delivered = try #require((push["delivered"] as? [[String: Any]])?.first)
            #expect((delivered["content"] as? [String: Any])?["title"] as? String == "[python] Your code", "\(push)")
            let notify = (try fixture.status()["extensions"] as? [[String: Any]])?.first { $0["name"] as? String == "notify" }
            #expect(notify?["managed"] as? Bool == true, "\(notify ?? [:])")
        }
    }

    /// An SDK extension started by hand holds its instance lock: the host
    /// cannot launch that name, so the one by hand attaches under it, and
    /// gets the push.
    @Test func aHandStartedInstanceHoldingItsLockAttachesUnderAnOnDemandName() throws {
        let fixture = try HostFixture()
        try writeFile(fixture.extensions + "/notify.extension.json", #"{"name":"notify","role":"notification","executable":"\#(exampleExecutable("example-notification"))","activation":"on-demand"}"#)
        let byHand = try TestProcess(exampleExecutable("example-notification"), ["--group", fixture.group.path, "--name", "notify"])
        defer { byHand.stopAlways() }
        try byHand.expectLine("no host is running; carrying on without a host")
        try fixture.withHost { host in
            try byHand.expectLine("attached to host pid \(host.pid) (started by hand)")
            let push = try fixture.group.json(try fixture.group.run(["push", "--json", #"{"title":"Hi"}"#], timeout: 30))
            let delivered = try #require((push["delivered"] as? [[String: Any]])?.first)
            #expect(delivered["extension"] as? String == "notify", "\(push)")
            #expect(delivered["modified"] as? Bool == true, "\(push)")
            let notify = (try fixture.status()["extensions"] as? [[String: Any]])?.first { $0["name"] as? String == "notify" }
            #expect(notify?["pid"] as? Int == Int(byHand.pid) && notify?["managed"] as? Bool == false, "\(notify ?? [:])")
        }
    }

    /// From outside any launch, an instance holding its lock (a Python
    /// extension by hand: the POSIX lock the probe sees, and the flock(2)
    /// the kernel names it by): the name's manifest decides open access.
    @Test func aHelloClaimingOpenAccessItsManifestDeniesIsRefused() throws {
        let fixture = try HostFixture()
        try writeFile(fixture.extensions + "/kb.extension.json", #"{"name":"kb","role":"keyboard","executable":"/bin/true","activation":"on-demand"}"#)
        try fixture.withHost { host in
            let byHand = try TestProcess("/usr/bin/env", ["python3", "-c", """
                import fcntl, json, os, socket, sys
                group = sys.argv[1]
                os.makedirs(group + "/locks/extensions", exist_ok=True)
                fd = os.open(group + "/locks/extensions/kb.lock", os.O_RDWR | os.O_CREAT, 0o600)
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                link = socket.socket(socket.AF_UNIX)
                link.connect(group + "/host.sock")
                lines = link.makefile("r")
                def hello(id, open_access):
                    link.sendall((json.dumps({"jsonrpc": "2.0", "id": id, "method": "\(HostMethod.hello)",
                        "params": {"name": "kb", "role": "keyboard", "openAccess": open_access}}) + "\\n").encode())
                    for line in lines:
                        if json.loads(line).get("id") == id: return line.strip()
                print(hello(1, True), flush=True)
                print(hello(2, False), flush=True)
                sys.stdin.read()
                """, fixture.group.path])
            defer { byHand.signal(SIGKILL) }
            let claimed = try #require(try byHand.readLine(timeout: 20))
            #expect(claimed.contains("extension 'kb' has no open access in the host's manifest"), "\(claimed)")
            try host.waitForError(containing: "said hello as 'kb' claiming open access, which its manifest does not grant; refused")
            let plain = try #require(try byHand.readLine(timeout: 20))
            #expect(plain.contains(#""managed":false"#) && plain.contains(#""openAccess":false"#), "\(plain)")
        }
    }

    /// No extension, launched or by hand, stops another (the user does, with
    /// `tether extension stop`), and each stops only the features it
    /// started: one started by hand has no more power than a launched one.
    @Test func noExtensionStopsAnotherOrAFeatureItDidNotStart() throws {
        let fixture = try HostFixture()
        try fixture.addExtension("steady", script: "exec sleep 300")
        try writeFile(fixture.extensions + "/kb.py", """
            import json, os, socket
            link = socket.socket(fileno=int(os.environ["TETHER_HOST_FD"]))
            lines = link.makefile("r")
            def call(id, method, params):
                link.sendall((json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params}) + "\\n").encode())
                for line in lines:
                    answer = json.loads(line)
                    if answer.get("id") == id: return answer["error"]["message"] if "error" in answer else "ok"
            call(1, "\(HostMethod.hello)", {"name": "kb", "role": "keyboard"})
            print("own", call(2, "\(HostMethod.featureStart)", {"name": "kb-own"}), call(3, "\(HostMethod.featureStop)", {"name": "kb-own"}), flush=True)
            print("users:", call(4, "\(HostMethod.featureStop)", {"name": "users"}), flush=True)
            print("steady:", call(5, "\(HostMethod.extensionStop)", {"name": "steady"}), flush=True)
            for line in lines: pass
            """)
        try writeFile(fixture.extensions + "/kb.extension.json",
                      #"{"name":"kb","role":"keyboard","executable":"/usr/bin/env","arguments":["python3","\#(fixture.extensions)/kb.py"],"activation":"on-demand","openAccess":true}"#)
        try fixture.withHost { host in
            _ = try host.expectLineStarting("extension 'steady' started")
            #expect(try fixture.group.run(["feature", "start", "users"]).status == 0)
            #expect(try fixture.group.run(["extension", "start", "kb"], timeout: 30).status == 0)
            let launched = try host.expectLineStarting("[kb] steady:", timeout: 30)
            #expect(launched.contains("[kb] own ok ok"), "\(launched)")
            #expect(launched.contains("[kb] users: 'kb' may stop only a feature it started; it did not start 'users'"), "\(launched)")
            #expect(launched.last == "[kb] steady: 'kb' is an extension; only the user stops extensions (tether extension stop)")

            // By hand, with the open access it claims (the host has no manifest of it).
            let client = try fixture.rawClient()
            defer { client.close() }
            #expect(Self.hello(client, #"{"name":"pad","role":"keyboard","openAccess":true}"#).contains(#""openAccess":true"#))
            func call(_ id: Int, _ method: String, _ params: String) -> String {
                client.send(Array(#"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)","params":\#(params)}"#.utf8) + [0x0a])
                for _ in 0..<16 {
                    guard let line = client.readLine() else { break }
                    if line.contains(#""id":\#(id)"#) { return line }
                }
                return ""
            }
            #expect(call(2, HostMethod.featureStart, #"{"name":"pad-own"}"#).contains(#""started":true"#))
            #expect(call(3, HostMethod.featureStop, #"{"name":"pad-own"}"#).contains(#""stopped":true"#))
            #expect(call(4, HostMethod.featureStop, #"{"name":"users"}"#).contains("'pad' may stop only a feature it started; it did not start 'users'"))
            #expect(call(5, HostMethod.extensionStop, #"{"name":"steady"}"#).contains("'pad' is an extension; only the user stops extensions"))
            #expect(try fixture.group.run(["probe", "feature", "users"]).status == 0)
            // The user may.
            #expect(try fixture.group.run(["extension", "stop", "steady"], timeout: 30).status == 0)
            #expect(try fixture.group.run(["feature", "stop", "users"]).status == 0)
        }
    }
}
