import Foundation
import Testing
import TetherSandbox
import TetherTestSupport

/// A file past an extension's size limit (`RLIMIT_FSIZE`) ends it with
/// SIGXFSZ, and its exit says why (a shell's `head`: Python ignores the
/// signal, and gets EFBIG instead).
@Suite(.timed)
struct DiskLimitTests {
    @Test func aFilePastTheLimitEndsTheExtensionWithReasonDisk() throws {
        let fixture = try HostFixture()
        let size = (SandboxPolicy.defaultFileSizeLimitMiB + 1) << 20
        try fixture.addExtension("filler", restart: "never", script: """
            exec head -c \(size) /dev/zero > "$TMPDIR/big"
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
