import CTetherSystem
import Glibc
import Logging
import TetherGroup
import TetherIPC
import SystemPackage
import TetherLog
import TetherLoop
import TetherManifest
import TetherSandbox

/// An exit: why it ended; the lifecycle decides whether and when it runs again.
extension ExtensionSupervisor {
    func exited(_ status: TerminationStatus) {
        guard let launch = lifecycle.launch else { return }
        let ranFor = resources.loop.now - launch.startedAt
        launch.process.close()
        // The kernel says when its cgroup's memory limit killed it (else
        // the exit is as it happened, with the limit in force beside it).
        let killedForMemory = lifecycle.ending == nil && (launch.cgroup?.memoryKills ?? 0) > 0
        let exit = ExtensionExit(status: status, intended: killedForMemory ? .memory : lifecycle.ending,
                                 memoryLimitMiB: sandboxReport.memoryLimitMiB)
        lastExit = exit
        resources.metrics.extensionExited(manifest.name, reason: exit.reason.rawValue)
        stopClock()
        handle(.exited(exit, ranFor: ranFor))
    }

    /// Whatever the launch left running in its group goes with it: SIGTERM
    /// now, SIGKILL after the grace. A restart starts from nothing, and a
    /// stop returns once nothing of it is left (its waiters hear then: the
    /// last may close the host's socket).
    func endLaunch(_ launch: ExtensionLaunch, waiters: [() -> Void]) {
        endLeftovers(of: launch, whenGone: waiters.isEmpty ? nil : { for waiter in waiters { waiter() } })
        // Blanked, not truncated: a block freed per exit costs the host a
        // tenth of a stop of thousands.
        launch.instanceLock.release(truncating: false)
        resources.slots.give()
    }
}
