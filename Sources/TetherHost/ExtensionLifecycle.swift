import TetherLoop
import TetherManifest

/// One extension's lifecycle as a state machine: each event gives a new
/// state and the actions for the supervisor to carry out, decided here
/// without processes, timers or files (unit-tested as such). A state
/// carries what belongs to it: a launch (`Launch`: the supervisor's
/// process, group, cgroup, TMPDIR and lock) while it runs or is ended,
/// why it is being ended, how far (`Ending`: told, SIGTERM, SIGKILL, as
/// systemd's stop states), whether work asked for a new one meanwhile,
/// and who waits for it. Beside the state it counts what decides an idle end (requests in
/// flight, waiters for a hello) and the restarts `status` shows.
struct ExtensionLifecycle<Launch> {
    enum State {
        /// Not running and not to run by itself (or ended by a stop).
        case stopped
        /// On demand, resting until work arrives.
        case idle
        /// Its launch is being made (the lock, the spawn): until the outcome.
        case starting
        /// An instance the host did not start holds its lock: the host's
        /// own runs once it ends (on demand: rests until asked).
        case external
        /// A start is scheduled: a restart after a crash, or a retry after
        /// a shortage of descriptors, processes or memory.
        case waiting
        /// `ending`: killed on the host's verdict (disk, watchdog), its exit due.
        case running(Launch, ending: ExtensionExit.Reason?)
        /// Being ended (`Ending`: why, how far, who waits).
        case stopping(Launch, Ending)
        /// It will not run again unless asked explicitly.
        case failed

        var isFailed: Bool { if case .failed = self { true } else { false } }
        var isIdle: Bool { if case .idle = self { true } else { false } }

        /// The name `status` shows.
        var name: String {
            switch self {
            case .stopped: "stopped"
            case .idle: "idle"
            case .starting: "starting"
            case .external: "external"
            case .waiting: "waiting"
            case .running: "running"
            case .stopping: "stopping"
            case .failed: "failed"
            }
        }
    }

    let onDemand: Bool
    let restart: ExtensionManifest.RestartPolicy
    let noRestartExitCodes: [Int32]
    /// From SIGTERM to SIGKILL.
    let graceMilliseconds: UInt64
    private(set) var state: State = .stopped
    /// Requests in flight to or for it (on demand: an idle end waits for none).
    private(set) var work = 0
    private(set) var waitingForHello = 0
    /// Restarts after a crash, since the host began.
    private(set) var restarts = 0
    private var crashes = CrashLoopDetector()
    /// Retries after shortages, on a schedule of their own.
    private var shortages = CrashLoopDetector.schedule

    init(onDemand: Bool, restart: ExtensionManifest.RestartPolicy, noRestartExitCodes: [Int32], graceMilliseconds: UInt64) {
        self.onDemand = onDemand
        self.graceMilliseconds = graceMilliseconds
        self.restart = restart
        self.noRestartExitCodes = noRestartExitCodes
    }

    /// The launch running or being ended.
    var launch: Launch? {
        switch state {
        case .running(let launch, _), .stopping(let launch, _): launch
        default: nil
        }
    }

    /// Why the host is ending its launch, if it is.
    var ending: ExtensionExit.Reason? {
        switch state {
        case .running(_, let ending): ending
        case .stopping(_, let ending): ending.reason
        default: nil
        }
    }

    /// Where a stop leaves it: resting if on demand, else stopped.
    private var rest: State { onDemand ? .idle : .stopped }

    // MARK: - Transitions

    mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .begin:
            guard case .stopped = state else { return [] }
            if onDemand {
                state = .idle
                return []
            }
            return startNow()
        case .demand(let explicitly):
            return demand(explicitly: explicitly)
        case .launched(let launch):
            guard case .starting = state else { return [] }
            state = .running(launch, ending: nil)
            shortages = CrashLoopDetector.schedule
            return []
        case .launchFailed(.shortage(let reason)):
            guard case .starting = state else { return [] }
            let delay = shortages.next()
            state = .waiting
            return [.tellRetry(reason, afterMilliseconds: delay), .scheduleStart(afterMilliseconds: delay, restart: false)]
        case .launchFailed(.broken(let reason)):
            state = .failed
            return [.fail(reason), .gone(relaunching: false)]
        case .heldElsewhere:
            guard case .starting = state else { return [] }
            state = .external
            return [.watchExternal]
        case .externalEnded:
            guard case .external = state else { return [] }
            guard onDemand else { return startNow() }
            // Its work went to the other instance; rest until asked.
            state = .idle
            return [.gone(relaunching: false)]
        case .startDue(let restart):
            guard case .waiting = state else { return [] }
            if restart { restarts += 1 }
            return (restart ? [.countRestart] : []) + startNow()
        case .workBegan:
            work += 1
            return armIdleClock()
        case .workEnded:
            work = max(0, work - 1)
            return armIdleClock()
        case .activity:
            return armIdleClock()
        case .helloWaiters(let change):
            waitingForHello = max(0, waitingForHello + change)
            return []
        case .idleTimedOut:
            // The end of the work in flight starts the clock again.
            guard work == 0, case .running(let launch, nil) = state else { return [] }
            if waitingForHello > 0 { return armIdleClock() }
            // SIGTERM a moment after the notice, time to save its work.
            let notice = min(1_000, graceMilliseconds)
            state = .stopping(launch, Ending(reason: .idle, phase: .noticed))
            return [.noticeIdleEnd] + (notice > 0 ? [.armEndClock(afterMilliseconds: notice)] : endClockRanOut())
        case .overDiskLimit:
            return verdict(.disk)
        case .unresponsive:
            return verdict(.unresponsive)
        case .stop(let then):
            return stop(then: then)
        case .endClockRanOut:
            return endClockRanOut()
        case .exited(let exit, let ranFor):
            return exited(exit, ranFor: ranFor)
        }
    }

    /// Only an on-demand extension running and not being ended has an idle clock.
    private func armIdleClock() -> [Action] {
        guard onDemand, case .running(_, nil) = state else { return [] }
        return [.armIdleClock]
    }

    private mutating func startNow() -> [Action] {
        state = .starting
        return [.launch]
    }

    private mutating func demand(explicitly: Bool) -> [Action] {
        switch state {
        case .running, .starting, .external:
            return []
        case .stopping(let launch, var ending):
            // On its way out for idleness: let it go, then launch anew.
            ending.relaunch = ending.relaunch || ending.reason == .idle || explicitly
            state = .stopping(launch, ending)
            return []
        case .waiting:
            return explicitly ? [.cancelWaits] + startNow() : []
        case .idle:
            return startNow()
        case .stopped, .failed:
            guard explicitly else { return [] }
            crashes = CrashLoopDetector()
            return startNow()
        }
    }

    /// Killed on the host's verdict, unless it is being stopped already.
    private mutating func verdict(_ reason: ExtensionExit.Reason) -> [Action] {
        switch state {
        case .running(let launch, nil):
            state = .running(launch, ending: reason)
        case .stopping(let launch, var ending) where ending.reason == .idle:
            ending.reason = reason
            ending.phase = .killed
            state = .stopping(launch, ending)
        default:
            return []
        }
        return [.kill(reason)]
    }

    // MARK: - Ending

    private mutating func stop(then waiter: @escaping () -> Void) -> [Action] {
        switch state {
        case .running(let launch, _):
            state = .stopping(launch, Ending(reason: .stopped, phase: .terminated, waiters: [waiter]))
            return [.cancelWaits] + terminate()
        case .stopping(let launch, var ending):
            ending.waiters.append(waiter)
            // Already on its way out for a stop: it waits with the others.
            // An idle end's pending SIGTERM included: a stop starts its own.
            let restart = ending.reason != .stopped
            ending.reason = .stopped
            ending.relaunch = false  // nothing relaunches after a stop
            if restart { ending.phase = .terminated }
            state = .stopping(launch, ending)
            return restart ? [.cancelWaits] + terminate() : []
        case .failed:
            return [.cancelWaits, .gone(relaunching: false), .answerStop(waiter)]
        default:
            state = rest
            return [.cancelWaits, .gone(relaunching: false), .answerStop(waiter)]
        }
    }

    /// SIGTERM now, SIGKILL once the grace runs out.
    private func terminate() -> [Action] {
        [.terminate, .armEndClock(afterMilliseconds: graceMilliseconds)]
    }

    private mutating func endClockRanOut() -> [Action] {
        guard case .stopping(let launch, var ending) = state else { return [] }
        switch ending.phase {
        case .noticed:
            ending.phase = .terminated
            state = .stopping(launch, ending)
            return terminate()
        case .terminated:
            ending.phase = .killed
            state = .stopping(launch, ending)
            return [.kill(ending.reason)]
        case .killed:
            return []
        }
    }

    // MARK: - Exits

    private mutating func exited(_ exit: ExtensionExit, ranFor: UInt64) -> [Action] {
        guard let launch else { return [] }
        work = 0  // what was in flight to it ended with it
        var relaunch = false
        var waiters: [() -> Void] = []
        if case .stopping(_, let ending) = state { (relaunch, waiters) = (ending.relaunch, ending.waiters) }
        // Whatever it left running goes with it; a restart starts from nothing.
        var actions: [Action] = [.endLaunch(launch, waiters: waiters)]
        if exit.reason == .stopped {
            state = rest
            return actions + [.tellExit(exit, .plain, ranFor: ranFor)] + relaunchIfAsked(relaunch)
        }
        if exit.reason == .idle {
            state = .idle
            crashes = CrashLoopDetector()  // it ran and did its work
            return actions + [.tellExit(exit, .endedIdle, ranFor: ranFor)] + relaunchIfAsked(relaunch)
        }
        actions.append(.tellExit(exit, .plain, ranFor: ranFor))
        if case .exited(let code) = exit.status, noRestartExitCodes.contains(code) {
            state = .failed
            return actions + [.fail("it exited with status \(code), which its manifest lists in noRestartExitCodes; "
                                    + "not restarting it")] + relaunchIfAsked(relaunch)
        }
        let crashLoop = "\(exit.status) \(CrashLoopDetector.crashLoopLimit) times in a row, each within "
            + "\(CrashLoopDetector.stableAfter / 1000) s of starting"
        if onDemand {
            // Launched for work; the next work launches it again. A crash
            // loop still marks it failed.
            if exit.status == .exited(0) { crashes = CrashLoopDetector() }  // it ran and ended well
            if exit.status != .exited(0), crashes.delayAfterFailure(ranFor: ranFor) == nil {
                state = .failed
                return actions + [.fail(crashLoop + "; not launching it again")] + relaunchIfAsked(relaunch)
            }
            state = .idle
            return actions + relaunchIfAsked(relaunch)
        }
        let wantsRestart = switch restart {
        case .always: true
        case .onFailure: exit.status != .exited(0)
        case .never: false
        }
        guard wantsRestart else {
            state = .stopped
            return actions + relaunchIfAsked(relaunch)
        }
        guard let delay = crashes.delayAfterFailure(ranFor: ranFor) else {
            state = .failed
            return actions + [.fail(crashLoop + "; not restarting it")] + relaunchIfAsked(relaunch)
        }
        state = .waiting
        actions[actions.count - 1] = .tellExit(exit, .restarting(afterMilliseconds: delay), ranFor: ranFor)
        return actions + [.gone(relaunching: true), .scheduleStart(afterMilliseconds: delay, restart: true)]
    }

    /// After an exit: launch again if work arrived while it was ending;
    /// else whatever waits for its hello hears that it will not come.
    private mutating func relaunchIfAsked(_ relaunch: Bool) -> [Action] {
        let again = relaunch && !state.isFailed
        return [.gone(relaunching: again)] + (again ? startNow() : [])
    }
}
