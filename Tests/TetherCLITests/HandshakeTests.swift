import Foundation
import Testing
import TetherTestSupport
import TetherIPC
import TetherLoop

/// The versioned hello between a host and an extension, from both sides.
@Suite(.timed) struct HandshakeTests {
    @Test func theHelloNegotiatesAVersion() throws {
        let fixture = try HostFixture()
        try fixture.withHost { host in
            func hello(_ name: String, _ version: String?) throws -> [String: Any] {
                let client = try fixture.rawClient()
                defer { client.close() }
                let field = version.map { #","protocol":\#($0)"# } ?? ""
                client.send(Array(#"{"jsonrpc":"2.0","id":1,"method":"\#(HostMethod.hello)","params":{"name":"\#(name)","role":"widget"\#(field)}}"#.utf8) + [0x0a])
                // The host's notices (extension.changed) may come first.
                for _ in 0..<10 {
                    let line = try #require(client.readLine())
                    let message = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                    if message["id"] != nil { return message }
                }
                throw TestTimeout(what: "an answer to the hello")
            }
            let refused = try hello("future", "99")
            let error = try #require(refused["error"] as? [String: Any])
            #expect(error["code"] as? Int == -32002)
            #expect(error["message"] as? String == "protocol version 99 is not supported; this host speaks versions 1 to 2")
            #expect(((error["data"] as? [String: Any])?["supported"] as? [String: Any])?["max"] as? Int == 2)
            #expect((try hello("odd", #""two""#)["error"] as? [String: Any])?["code"] as? Int == -32602)
            #expect((try hello("null", "null")["result"] as? [String: Any])?["protocol"] as? Int == 1)

            let oldAnswer = try hello("old", nil)
            let old = try #require(oldAnswer["result"] as? [String: Any], "\(oldAnswer)")
            #expect(old["protocol"] as? Int == 1, "a hello without a version is version 1")
            let current = try #require(try hello("current", "2")["result"] as? [String: Any])
            #expect(current["protocol"] as? Int == 2)
            #expect((current["capabilities"] as? [String])?.contains(ExtensionMethod.ping) == true)
            #expect((current["host"] as? [String: Any])?["pid"] as? Int == Int(host.pid))
            #expect((current["host"] as? [String: Any])?["version"] as? String == TetherVersion.current, "as `tether --version` says")

            // One hello per connection: a second (which once left the first's
            // watchdog running against a freed entry) is refused.
            let client = try fixture.rawClient()
            defer { client.close() }
            for id in 1...2 {
                client.send(Array(#"{"jsonrpc":"2.0","id":\#(id),"method":"\#(HostMethod.hello)","params":{"name":"twice\#(id)","role":"widget","protocol":2}}"#.utf8) + [0x0a])
            }
            var answers: [String] = []
            for _ in 0..<10 where answers.count < 2 {
                guard let line = client.readLine() else { break }
                if line.contains(#""id":"#) { answers.append(line) }
            }
            #expect(answers.count == 2)
            #expect(answers.last?.contains("this connection already said hello, as 'twice1'") == true, "\(answers)")
            #expect(try fixture.group.run(["status"]).status == 0)
        }
    }

    /// A host that speaks none of the SDK's versions: the extension exits 3
    /// with the host's sentence. The host here is a Python stand-in holding
    /// the host lock through `tether hold`; the hello it reads says the
    /// SDK's SIGTERM handler ends the extension.
    @Test func theSDKExitsWhenTheHostSpeaksNoVersionOfIts() throws {
        let group = try TestGroup()
        let script = """
            import json, os, socket, sys
            path = sys.argv[1]
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(path); s.listen(4)
            print("listening", flush=True)
            while True:
                c, _ = s.accept()
                f = c.makefile("rw", encoding="utf-8", newline="\\n")
                m = json.loads(f.readline())
                print("HELLO " + json.dumps(m["params"], sort_keys=True), flush=True)
                f.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32002,
                    "message": "protocol version 2 is not supported; this host speaks versions 7 to 9"}}) + "\\n")
                f.flush()
            """
        try writeFile(group.dir.path + "/fakehost.py", script)
        try FileManager.default.createDirectory(atPath: group.path, withIntermediateDirectories: true)
        let fake = try group.startHold(["host"], ["python3", group.dir.path + "/fakehost.py", group.path + "/host.sock"])
        defer {
            fake.signal(SIGTERM)
            _ = try? fake.waitForExit()
        }
        #expect(try fake.readLine() == "listening")
        let widget = try runCommand(exampleExecutable("example-widget"), ["--group", group.path, "--policy", "never"],
                                    timeout: 20)
        #expect(widget.status == 3)
        let hello = try fake.readLine() ?? ""
        #expect(hello.contains(#""endsOnSigterm": true"#), "\(hello)")
        #expect(widget.stderr.contains("the host refused this extension: protocol version 2 is not supported; "
                                       + "this host speaks versions 7 to 9 (this SDK speaks version 2)"), "\(widget.stderr)")
    }
}
