import Foundation
import Testing
import TetherTestSupport

/// A host started by a parent that ignores SIGCHLD (which exec passes on):
/// the kernel would reap its extensions unasked and every exit would read
/// as a clean one. The spawn sets SIGCHLD back to its default first.
@Suite(.timed) struct InheritedSignalTests {
    @Test func aHostStartedWithSIGCHLDIgnoredStillSeesItsExtensionsExitCodes() throws {
        let fixture = try HostFixture()
        try fixture.addExtension("seven", restart: "never", script: "exit 7")
        let wrapper = "import os, signal, sys\nsignal.signal(signal.SIGCHLD, signal.SIG_IGN)\nos.execv(sys.argv[1], sys.argv[1:])"
        let host = try TestProcess("/usr/bin/env", ["python3", "-c", wrapper, tetherExecutable]
                                   + fixture.group.withGroup(["host", "--extensions-dir", fixture.extensions]))
        defer { host.signal(SIGKILL) }
        _ = try host.expectLineStarting("tether host ready")
        var last: [String: Any] = [:]
        try waitFor("seven's exit in the host's status", timeout: 20) {
            let list = (try? fixture.status()["extensions"] as? [[String: Any]]) ?? nil
            last = list?.first { $0["name"] as? String == "seven" }?["lastExit"] as? [String: Any] ?? [:]
            return !last.isEmpty
        }
        #expect(last["code"] as? Int == 7, "\(last)")
        #expect(try host.stop() == 0)
    }
}
