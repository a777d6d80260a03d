#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import TetherHost
import TetherLoop
import TetherTestSupport

/// The host's reaper of children nobody waits for (orphans it inherits)
/// never takes one a `ChildProcess` waits for: its exit status would be lost.
@Suite(.timed) struct OrphanReaperTests {
    @Test func aChildProcessKeepsItsExitStatus() async throws {
        let status: TerminationStatus = try await onLoop { loop, finish in
            let child = try ChildProcess.spawn(loop: loop, ProcessOptions(executable: "sh", arguments: ["-c", "exit 7"])) {
                finish($0)
            }
            // Ended, not yet reaped: this runs on the loop, which reads its
            // pidfd only once this returns.
            var info = siginfo_t()
            _ = waitid(P_PID, id_t(child.pid), &info, WEXITED | WNOWAIT)
            OrphanReaper.reap()
        }
        #expect(status == .exited(7))
    }
}
