import Foundation
import Testing
import TetherIPC
import TetherTestSupport

/// What only a host shows of features and their starters: those an
/// extension without open access started end when its process ends; one
/// with open access leaves them running for the user to stop. The rules
/// themselves (16 an extension, the ceiling, who stops what) are
/// `FeatureDeskTests`'.
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

    @Test func featuresEndWithTheProcessOfAStarterWithoutOpenAccess() throws {
        let fixture = try HostFixture()
        try writeFile(fixture.extensions + "/grabby.py", Self.starter("grabby", role: "widget", prefix: "g", count: 2))
        try writeFile(fixture.extensions + "/grabby.extension.json",
                      #"{"name":"grabby","role":"widget","executable":"/usr/bin/env","arguments":["python3","\#(fixture.extensions)/grabby.py"],"activation":"on-demand","restart":"never"}"#)
        try writeFile(fixture.extensions + "/pad.py", Self.starter("pad", role: "keyboard", prefix: "kept", count: 1))
        try writeFile(fixture.extensions + "/pad.extension.json",
                      #"{"name":"pad","role":"keyboard","executable":"/usr/bin/env","arguments":["python3","\#(fixture.extensions)/pad.py"],"activation":"on-demand","restart":"never","openAccess":true}"#)
        try fixture.withHost { host in
            _ = try fixture.group.run(["extension", "start", "grabby"], timeout: 30)
            #expect(try host.expectLineStarting("[grabby] started", timeout: 30).last ?? "" == "[grabby] started 2 []")
            // It exits: the two end with it.
            var ended: Set<String> = []
            for _ in 0..<2 {
                let line = try host.expectLineStarting("feature 'g", timeout: 30).last ?? ""
                if line.hasSuffix("' stopped") { ended.insert(line) }
            }
            #expect(ended.count == 2, "\(ended)")
            #expect(try fixture.group.run(["probe", "feature", "g0"]).status == 1)

            // With open access, what it started stays after it exits, the user's to stop.
            _ = try fixture.group.run(["extension", "start", "pad"], timeout: 30)
            #expect(try host.expectLineStarting("[pad] started", timeout: 30).last ?? "" == "[pad] started 1 []")
            _ = try host.expectLineStarting("extension 'pad' exited", timeout: 30).last ?? ""
            #expect(try fixture.group.run(["probe", "feature", "kept0"]).status == 0)
            #expect(try fixture.group.run(["feature", "stop", "kept0"]).status == 0)
        }
    }
}
