#if canImport(Glibc)
import Glibc
#endif

/// How Tether ends what it started and no state machine keeps (a launch's
/// leftovers, the demo's processes): SIGTERM, then, if it has not ended
/// within the grace, SIGKILL. An extension's own end is its lifecycle's
/// (`ExtensionLifecycle`'s phases), on the supervisor's one clock. `deliver` sends a signal to whatever
/// "it" is (a process, a process group, a cgroup); `cancel()` once it has
/// ended. The reaper that outlives a killed host does the same in C
/// (`tether_start_group_reaper`), where no loop runs.
package final class GracefulStop {
    private let loop: EventLoop
    private var timer: LoopTimer?
    /// SIGKILL was sent: the grace passed.
    package private(set) var killed = false

    package init(loop: EventLoop) {
        self.loop = loop
    }

    /// SIGTERM after `delay` milliseconds (0: now), SIGKILL `grace`
    /// milliseconds later; `onKill` right after the SIGKILL. A stop already
    /// under way starts over.
    package func begin(after delay: UInt64 = 0, grace: UInt64, _ deliver: @escaping (Int32) -> Void,
                       onKill: (() -> Void)? = nil) {
        cancel()
        killed = false
        let timer = LoopTimer(loop: loop)
        self.timer = timer
        let terminate = { [weak self] in
            deliver(SIGTERM)
            timer.start(afterMilliseconds: grace) {
                self?.killed = true
                deliver(SIGKILL)
                onKill?()
            }
        }
        if delay == 0 { return terminate() }
        timer.start(afterMilliseconds: delay) { terminate() }
    }

    /// It ended (or is being ended otherwise): no further signal.
    package func cancel() {
        timer?.close()
        timer = nil
    }

    deinit { timer?.close() }
}
