import Glibc
import Testing
import TetherLoop
import TetherTestSupport

/// SIGTERM, the grace, SIGKILL: a process that ends on SIGTERM is never
/// killed; one that ignores it is, once the grace has passed, not before.
@Suite(.timed) struct GracefulStopTests {
    @Test func aProcessThatEndsOnSIGTERMIsNotKilled() async throws {
        let (status, killed): (TerminationStatus, Bool) = try await onLoop { loop, finish in
            let stop = GracefulStop(loop: loop)
            let child = try ChildProcess.spawn(loop: loop, ProcessOptions(executable: "sleep", arguments: ["60"])) { status in
                stop.cancel()
                finish((status, stop.killed))
            }
            stop.begin(grace: 5_000) { try? child.signal($0) }
        }
        #expect(status == .signaled(SIGTERM))
        #expect(!killed)
    }

    @Test func aProcessThatIgnoresSIGTERMIsKilledAfterTheGrace() async throws {
        let (status, waited): (TerminationStatus, UInt64) = try await onLoop { loop, finish in
            let stop = GracefulStop(loop: loop)
            var started: UInt64 = 0
            // It says when its trap is set: SIGTERM before that would end it.
            let child = try ChildProcess.spawn(
                loop: loop, ProcessOptions(executable: "sh", arguments: ["-c", #"trap "" TERM; echo ready; exec sleep 60"#],
                                           stdout: .pipe)) { status in
                stop.cancel()
                finish((status, loop.now - started))
            }
            try child.stdout?.startReading { _ in
                guard started == 0 else { return }
                started = loop.now
                stop.begin(grace: 300) { try? child.signal($0) }
            }
        }
        #expect(status == .signaled(SIGKILL))
        #expect(waited >= 300, "killed after \(waited) ms, before the grace")
    }

    /// A delayed stop that is cancelled sends nothing at all.
    @Test func aCancelledStopSendsNothing() async throws {
        let sent: [Int32] = try await onLoop { loop, finish in
            var sent: [Int32] = []
            let stop = GracefulStop(loop: loop)
            stop.begin(after: 50, grace: 50) { sent.append($0) }
            stop.cancel()
            let check = LoopTimer(loop: loop)
            check.start(afterMilliseconds: 300) {
                check.close()
                finish(sent)
            }
        }
        #expect(sent.isEmpty)
    }
}
