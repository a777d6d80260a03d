import Foundation
import Testing
import TetherTestSupport

/// A launched extension speaks as itself and nothing more: a child of a
/// keyboard (which cannot leave its process group) cannot say hello as the
/// idle notification extension (and get its pushes) or as a new name with
/// open access; and no hello claims open access its manifest denies.
/// Each refusal is logged.
@Suite(.timed) struct ImpersonationTests {
    @Test func aKeyboardsChildCannotSpeakAsAnotherOrClaimMore() throws {
        let fixture = try HostFixture()
        try writeFile(fixture.extensions + "/impostor.py", """
            import json, os, socket, subprocess, sys
            def hello(name, open_access):
                s = socket.socket(socket.AF_UNIX); s.connect(os.environ["TETHER_SOCKET"])
                s.sendall((json.dumps({"jsonrpc": "2.0", "id": 1, "method": "extension.hello",
                    "params": {"name": name, "role": "notification", "openAccess": open_access, "protocol": 2}}) + "\\n").encode())
                for line in s.makefile("r"):
                    answer = json.loads(line)
                    if answer.get("id") == 1: return "ok" if "result" in answer else "refused"
            try:
                os.setsid(); session = "left"
            except OSError:
                session = "refused"
            print("setsid", session, "notify", hello("notify", False), "ghost", hello("ghost", True), flush=True)
            """)
        try writeFile(fixture.extensions + "/kb.extension.json", #"{"name":"kb","role":"keyboard","executable":"/usr/bin/env","arguments":["python3","\#(fixture.extensions)/impostor.py"],"activation":"always","restart":"never"}"#)
        try writeFile(fixture.extensions + "/notify.extension.json", #"{"name":"notify","role":"notification","executable":"/bin/true","activation":"on-demand"}"#)
        let host = try fixture.startHost()
        defer { host.signal(SIGTERM) }
        let line = try #require(try host.expectLineStarting("[kb] setsid", timeout: 30).last)
        #expect(line == "[kb] setsid refused notify refused ghost refused", "\(line)")
        try host.waitForError(containing: "a process of extension 'kb', said hello as 'notify'; refused")
        let notify = (try fixture.status()["extensions"] as? [[String: Any]])?.first { $0["name"] as? String == "notify" }
        #expect(notify?["attached"] as? Bool != true, "\(notify ?? [:])")
    }

    /// From outside any launch (a shell): the name's manifest decides.
    @Test func aHelloClaimingOpenAccessItsManifestDeniesIsRefused() throws {
        let fixture = try HostFixture()
        try writeFile(fixture.extensions + "/kb.extension.json", #"{"name":"kb","role":"keyboard","executable":"/bin/true","activation":"on-demand"}"#)
        let host = try fixture.startHost()
        defer { host.signal(SIGTERM) }
        let client = try RawClient(path: fixture.group.path + "/host.sock")
        defer { client.close() }
        client.send(Array(#"{"jsonrpc":"2.0","id":1,"method":"extension.hello","params":{"name":"kb","role":"keyboard","openAccess":true}}"#.utf8) + [0x0a])
        var answer = ""
        for _ in 0..<10 {
            answer = client.readLine() ?? ""
            if answer.contains(#""id":1"#) { break }
        }
        #expect(answer.contains("extension 'kb' has no open access in the host's manifest"), "\(answer)")
        try host.waitForError(containing: "said hello as 'kb' claiming open access, which its manifest does not grant; refused")
    }
}
