import Foundation
import Testing
import TetherTestSupport
import TetherIPC

/// Invariant 25: a keyboard without open access passes nothing on. Each
/// method of the socket, asked by such a keyboard through its launch's link
/// and by one attached by hand, under one host: what its role needs is
/// answered, anything that reaches another process is refused
/// (docs/security.md lists them; which methods read is `HostRouterTests`').
@Suite(.timed) struct ReadOnlyKeyboardTests {
    struct Case: Sendable {
        let method: String
        let params: String
        let allowed: Bool
    }

    static let cases: [Case] = [
        Case(method: HostMethod.ping, params: "{}", allowed: true),
        Case(method: HostMethod.status, params: "{}", allowed: true),
        Case(method: HostMethod.metrics, params: "{}", allowed: false),
        Case(method: HostMethod.extensionList, params: "{}", allowed: true),
        Case(method: HostMethod.featureList, params: "{}", allowed: true),
        Case(method: HostMethod.featureStart, params: #"{"name":"typed"}"#, allowed: true),
        Case(method: HostMethod.tokenGet, params: "{}", allowed: true),
        Case(method: HostMethod.featureStop, params: #"{"name":"typed"}"#, allowed: false),
        Case(method: HostMethod.extensionStart, params: #"{"name":"witness"}"#, allowed: false),
        Case(method: HostMethod.extensionStop, params: #"{"name":"witness"}"#, allowed: false),
        Case(method: HostMethod.push, params: #"{"payload":{"title":"typed"}}"#, allowed: false),
        Case(method: HostMethod.reload, params: "{}", allowed: false),
        Case(method: HostMethod.defaultsChanged, params: #"{"keys":["typed"]}"#, allowed: false),
    ]

    static let refusal = "has read-only access to the group"

    /// How an answered method's answer starts, as the keyboard prints it: a
    /// result, but for a token with nobody signed in, which is the session's
    /// own error.
    static func answer(_ test: Case) -> String {
        test.method == HostMethod.tokenGet ? "not logged in: run 'tether login' first" : "ok "
    }

    /// Says hello as a keyboard on its link (protocol 1: no pings), asks
    /// each `[METHOD, PARAMS]` of its argument in turn and prints each
    /// answer's result or error message, numbered.
    static let keyboard = """
        import json, os, socket, sys
        link = socket.socket(fileno=int(os.environ["TETHER_HOST_FD"]))
        lines = link.makefile("r")
        def call(id, method, params):
            link.sendall((json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params}) + "\\n").encode())
            for line in lines:
                answer = json.loads(line)
                if answer.get("id") == id:
                    return answer["error"]["message"] if "error" in answer else "ok " + json.dumps(answer["result"])
        hello = call(1, "\(HostMethod.hello)", {"name": "kb", "role": "keyboard"})
        print("hello:", hello, flush=True)
        for index, (method, params) in enumerate(json.loads(sys.argv[1])):
            print("answer %d:" % index, call(index + 2, method, json.loads(params)), flush=True)
        for line in lines: pass
        """

    func call(_ client: RawClient, _ method: String, _ params: String, id: Int) -> String {
        client.send(Array(#"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)","params":\#(params)}"#.utf8) + [0x0a])
        for _ in 0..<16 {
            guard let line = client.readLine() else { break }
            if line.contains(#""id":\#(id)"#) { return line }
        }
        return ""
    }

    @Test func aReadOnlyKeyboardIsAnsweredOnlyWhatItsRoleNeeds() throws {
        let fixture = try HostFixture()
        try writeFile(fixture.extensions + "/kb.py", Self.keyboard)
        let calls = String(decoding: try JSONSerialization.data(withJSONObject: Self.cases.map { [$0.method, $0.params] }),
                           as: UTF8.self)
        let arguments = try String(decoding: JSONSerialization.data(withJSONObject: [
            "python3", fixture.extensions + "/kb.py", calls,
        ]), as: UTF8.self)
        try writeFile(fixture.extensions + "/kb.extension.json",
                      #"{"name":"kb","role":"keyboard","executable":"/usr/bin/env","arguments":\#(arguments),"activation":"always","restart":"never"}"#)
        try fixture.addExtension("witness", role: "notification", restart: "never", script: "exec sleep 300")
        try fixture.withHost { host in
            let hello = try #require(try host.expectLineStarting("[kb] hello:", timeout: 30).last)
            // Not offered what it would be refused.
            #expect(hello.contains(#""capabilities": ["feature", "\#(HostMethod.tokenGet)", "\#(ExtensionMethod.ping)""#), "\(hello)")
            for (index, test) in Self.cases.enumerated() {
                let linked = try #require(try host.expectLineStarting("[kb] answer \(index): ", timeout: 30).last)
                #expect(linked.contains(Self.refusal) == !test.allowed, "\(test.method) through its link: \(linked)")
                if test.allowed {
                    #expect(linked.hasPrefix("[kb] answer \(index): \(Self.answer(test))"), "\(test.method) through its link: \(linked)")
                } else {
                    #expect(linked.contains("'kb' has read-only access to the group (set \"openAccess\": true in its manifest)"))
                }
            }

            // One started by hand with no manifest: its hello decides.
            let client = try fixture.rawClient()
            defer { client.close() }
            #expect(call(client, HostMethod.hello, #"{"name":"kb-by-hand","role":"keyboard"}"#, id: 1).contains("result"))
            for (index, test) in Self.cases.enumerated() {
                let byHand = call(client, test.method, test.params, id: index + 2)
                #expect(byHand.contains(Self.refusal) == !test.allowed, "\(test.method) by hand: \(byHand)")
                #expect(!byHand.isEmpty, "\(test.method) by hand: no answer")
                if test.allowed, test.method != HostMethod.tokenGet {
                    #expect(byHand.contains(#""result""#), "\(test.method) by hand: \(byHand)")
                }
            }
        }
    }

    /// Sent as a notification (no answer to refuse): nothing reaches the
    /// other extensions either. The user's own notice after it is the first
    /// one they hear.
    @Test func aReadOnlyKeyboardsNoticeReachesNoOne() throws {
        let fixture = try HostFixture()
        try fixture.withHost { host in
            let witness = try fixture.rawClient()
            defer { witness.close() }
            #expect(call(witness, HostMethod.hello, #"{"name":"witness","role":"widget"}"#, id: 1).contains("result"))
            // By hand, in a process of its own (the host knows a keyboard by its pid).
            let keyboard = try TestProcess("/usr/bin/env", ["python3", "-c", """
                import json, socket, sys
                link = socket.socket(socket.AF_UNIX)
                link.connect(sys.argv[1])
                lines = link.makefile("r")
                def send(message):
                    link.sendall((json.dumps(dict(jsonrpc="2.0", **message)) + "\\n").encode())
                def answer(id):
                    for line in lines:
                        if json.loads(line).get("id") == id: return line.strip()
                send({"id": 1, "method": "\(HostMethod.hello)", "params": {"name": "kb", "role": "keyboard"}})
                print("hello", answer(1), flush=True)
                send({"method": "\(HostMethod.defaultsChanged)", "params": {"keys": ["typed"]}})
                # Handled in order: once the ping is answered, so was the notice.
                send({"id": 2, "method": "\(HostMethod.ping)"})
                print("sent", answer(2), flush=True)
                sys.stdin.read()
                """, fixture.group.path + "/host.sock"])
            defer { keyboard.signal(SIGKILL) }
            #expect(try keyboard.readLine(timeout: 20)?.contains(#""result""#) == true)
            #expect(try keyboard.readLine(timeout: 20)?.hasPrefix("sent {") == true)
            let user = try fixture.rawClient()
            defer { user.close() }
            #expect(call(user, HostMethod.defaultsChanged, #"{"keys":["user"]}"#, id: 1).contains(#""notified":2"#))
            var heard: String?
            for _ in 0..<16 {
                guard let line = witness.readLine() else { break }
                if line.contains("\"defaults.changed\"") { heard = line; break }
            }
            #expect(heard?.contains(#"["user"]"#) == true, "\(heard ?? "nothing")")
        }
    }
}
