import Foundation
import Testing
import TetherIPC
import TetherTestSupport

/// Features belong to their starter: an extension runs at most
/// `featuresPerExtension` (16) it started, and those an extension without
/// open access started end when it ends; one with open access leaves
/// them running for the user to stop.
@Suite(.timed) struct FeatureOwnershipTests {
    /// A Python extension that says hello on its link, starts features
    /// `PREFIX0`... (`count` of them), prints each answer, and exits.
    static func starter(_ name: String, role: String, prefix: String, count: Int) -> String {
        """
        import json, os, socket
        link = socket.socket(fileno=int(os.environ["TETHER_HOST_FD"]))
        lines = link.makefile("r")
        def call(id, method, params):
            link.sendall((json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params}) + "\\n").encode())
            for line in lines:
                answer = json.loads(line)
                if answer.get("id") == id: return answer["error"]["message"] if "error" in answer else "ok"
        call(0, "\(HostMethod.hello)", {"name": "\(name)", "role": "\(role)"})
        answers = [call(i + 1, "\(HostMethod.featureStart)", {"name": "\(prefix)%d" % i}) for i in range(\(count))]
        print("started", answers.count("ok"), [a for a in answers if a != "ok"], flush=True)
        """
    }

    @Test func featuresEndWithAStarterWithoutOpenAccessAndAreCappedPerExtension() throws {
        let fixture = try HostFixture()
        try writeFile(fixture.extensions + "/grabby.py", Self.starter("grabby", role: "widget", prefix: "g", count: 17))
        try writeFile(fixture.extensions + "/grabby.extension.json",
                      #"{"name":"grabby","role":"widget","executable":"/usr/bin/env","arguments":["python3","\#(fixture.extensions)/grabby.py"],"activation":"on-demand","restart":"never"}"#)
        try writeFile(fixture.extensions + "/pad.py", Self.starter("pad", role: "keyboard", prefix: "kept", count: 1))
        try writeFile(fixture.extensions + "/pad.extension.json",
                      #"{"name":"pad","role":"keyboard","executable":"/usr/bin/env","arguments":["python3","\#(fixture.extensions)/pad.py"],"activation":"on-demand","restart":"never","openAccess":true}"#)
        try fixture.withHost { host in
            _ = try fixture.group.run(["extension", "start", "grabby"], timeout: 30)
            let started = try host.expectLineStarting("[grabby] started", timeout: 30).last ?? ""
            #expect(started == "[grabby] started 16 [\"'grabby' already runs 16 features it started, its limit; stop one first\"]",
                    "\(started)")
            // It exits: the 16 end with it.
            var ended: Set<String> = []
            for _ in 0..<16 {
                let line = try host.expectLineStarting("feature 'g", timeout: 30).last ?? ""
                if line.hasSuffix("' stopped") { ended.insert(line) }
            }
            #expect(ended.count == 16, "\(ended)")
            #expect(try fixture.group.run(["probe", "feature", "g0"]).status == 1)
            // The user may start one of those names now.
            #expect(try fixture.group.run(["feature", "start", "g0"]).status == 0)

            // With open access, what it started stays after it exits, the user's to stop.
            _ = try fixture.group.run(["extension", "start", "pad"], timeout: 30)
            #expect(try host.expectLineStarting("[pad] started", timeout: 30).last ?? "" == "[pad] started 1 []")
            _ = try host.expectLineStarting("extension 'pad' exited", timeout: 30).last ?? ""
            #expect(try fixture.group.run(["probe", "feature", "kept0"]).status == 0)
            #expect(try fixture.group.run(["feature", "stop", "kept0"]).status == 0)
        }
    }
}
