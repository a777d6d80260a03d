import Foundation
import Testing
import TetherSandbox
import TetherTestSupport

/// A file past an extension's size limit (`RLIMIT_FSIZE`) ends it with
/// SIGXFSZ, and its exit says why.
@Suite(.timed)
struct DiskLimitTests {
    @Test func aFilePastTheLimitEndsTheExtensionWithReasonDisk() throws {
        let fixture = try HostFixture()
        let size = (SandboxPolicy.defaultFileSizeLimitMiB + 1) << 20
        try fixture.addExtension("filler", restart: "never", script: """
            exec python3 -c 'import os; open(os.environ["TMPDIR"] + "/big", "wb").truncate(\(size))'
            """)
        let host = try fixture.startHost()
        defer { host.signal(SIGTERM) }
        var last: [String: Any] = [:]
        try waitFor("the filler's exit in the host's status", timeout: 20) {
            let list = (try? fixture.status()["extensions"] as? [[String: Any]]) ?? nil
            last = list?.first { $0["name"] as? String == "filler" }?["lastExit"] as? [String: Any] ?? [:]
            return !last.isEmpty
        }
        #expect(last["reason"] as? String == "disk", "\(last)")
        #expect(last["signal"] as? Int == Int(SIGXFSZ), "\(last)")
        #expect(try host.stop() == 0)
    }
}
