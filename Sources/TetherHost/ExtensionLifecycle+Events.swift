import TetherManifest

/// What goes into the lifecycle (events) and what comes out (actions),
/// and what an end under way carries.
extension ExtensionLifecycle {
    /// An end under way.
    struct Ending {
        /// Idle, stopped, or a verdict that came meanwhile.
        var reason: ExtensionExit.Reason
        /// Work arrived: launch again once it is gone.
        var relaunch = false
        var phase: Phase
        /// Stops waiting for it to be gone, leftovers included.
        var waiters: [() -> Void] = []

        /// systemd's `STOP_SIGTERM` and `STOP_SIGKILL`, after iOS's notice.
        enum Phase {
            /// Told it will end (idle): SIGTERM when the end clock runs out.
            case noticed
            /// SIGTERM sent: SIGKILL when the grace runs out.
            case terminated
            /// SIGKILL sent: only its exit is awaited.
            case killed
        }
    }

    enum Event {
        /// The host starts: run it, or rest until asked if on demand.
        case begin
        /// Work for it (a push, a reload, `extension start`); `explicitly`:
        /// the user asked, which starts a failed or stopped one afresh.
        case demand(explicitly: Bool)
        /// The outcome of `.launch`.
        case launched(Launch)
        case launchFailed(LaunchFailure)
        case heldElsewhere
        /// The instance started by hand ended.
        case externalEnded
        /// A scheduled start is due; `restart`: after a crash (counted).
        case startDue(restart: Bool)
        /// A request to or for it began or ended (a push, a key): work holds
        /// off an idle end, and the idle clock starts again.
        case workBegan
        case workEnded
        /// Something came on its link: the idle clock starts again.
        case activity
        /// Waiters for its hello came or went (`change`, in number): while
        /// any waits, its idle clock starts again rather than ending it (a
        /// relaunch's hello is awaited; its work already ended with the old).
        case helloWaiters(change: Int)
        /// Its idle clock ran out.
        case idleTimedOut
        /// The host's verdicts: past its disk limit, or unresponsive.
        case overDiskLimit
        case unresponsive
        /// `extension stop`, or the host stopping; `then` once it is gone
        /// with its leftovers.
        case stop(then: () -> Void)
        /// The end clock ran out: SIGTERM after the notice, SIGKILL after the grace.
        case endClockRanOut
        /// Its main process ended, after `ranFor` milliseconds.
        case exited(ExtensionExit, ranFor: UInt64)
    }

    enum LaunchFailure {
        /// Descriptors, processes, memory or space ran out: not its fault.
        case shortage(String)
        /// It cannot run as configured (or its lock cannot be taken).
        case broken(String)
    }

    enum Action {
        /// Take its instance lock and spawn it; report `.launched`,
        /// `.launchFailed` or `.heldElsewhere`.
        case launch
        /// Watch the lock of the instance started by hand; `.externalEnded` when free.
        case watchExternal
        /// `.startDue` after `milliseconds`.
        case scheduleStart(afterMilliseconds: UInt64, restart: Bool)
        /// A restart begins: counted (`restarts`) and told.
        case countRestart
        /// Its idle clock (again) from now: `.idleTimedOut` after its idle timeout.
        case armIdleClock
        /// Give up a scheduled start and the external watch.
        case cancelWaits
        /// The idle notice to the extension (`extension.willTerminate`).
        case noticeIdleEnd
        /// `.endClockRanOut` after `milliseconds` (its clock is its own while it ends).
        case armEndClock(afterMilliseconds: UInt64)
        /// SIGTERM to its whole tree.
        case terminate
        /// SIGKILL to its whole tree now: the grace ran out, or the host's verdict.
        case kill(ExtensionExit.Reason)
        /// After its exit: its leftovers, cgroup, TMPDIR and lock go; then
        /// the stops waiting for it hear.
        case endLaunch(Launch, waiters: [() -> Void])
        /// A stop with no launch to end: answered once what earlier ones
        /// left is cleared.
        case answerStop(() -> Void)
        /// The exit, told once, with what comes next where that adds to it.
        case tellExit(ExtensionExit, ExitNote, ranFor: UInt64)
        /// A retry after a shortage, with its delay.
        case tellRetry(String, afterMilliseconds: UInt64)
        /// Marked failed, for `reason`.
        case fail(String)
        /// Whatever waits for its hello: it comes (`relaunching`) or not.
        case gone(relaunching: Bool)
    }

    enum ExitNote: Equatable {
        case plain
        case endedIdle
        case restarting(afterMilliseconds: UInt64)
    }
}
