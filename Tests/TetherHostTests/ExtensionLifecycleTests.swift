import Testing
import TetherLoop
import TetherManifest
@testable import TetherHost

/// The lifecycle's decisions, without processes: a launch here is a number.
@Suite struct ExtensionLifecycleTests {
    typealias Lifecycle = ExtensionLifecycle<Int>

    func exit(_ status: TerminationStatus, _ lifecycle: Lifecycle) -> Lifecycle.Event {
        .exited(ExtensionExit(status: status, intended: lifecycle.ending, at: ""), ranFor: 50)
    }

    /// Kinds of actions, in order, for comparing.
    func kinds(_ actions: [Lifecycle.Action]) -> [String] {
        actions.map { action in
            switch action {
            case .launch: "launch"
            case .watchExternal: "watchExternal"
            case .scheduleStart(let delay, let restart): "scheduleStart(\(delay), restart: \(restart))"
            case .countRestart: "countRestart"
            case .armIdleClock: "armIdleClock"
            case .cancelWaits: "cancelWaits"
            case .noticeIdleEnd: "noticeIdleEnd"
            case .armEndClock(let delay): "armEndClock(\(delay))"
            case .terminate: "terminate"
            case .kill(let reason): "kill(\(reason))"
            case .endLaunch(let launch, let waiters): waiters.isEmpty ? "endLaunch(\(launch))" : "endLaunch(\(launch), \(waiters.count) waiting)"
            case .answerStop: "answerStop"
            case .tellExit(let exit, let note, _): "tellExit(\(exit.reason), \(note))"
            case .tellRetry: "tellRetry"
            case .fail: "fail"
            case .gone(let relaunching): "gone(relaunching: \(relaunching))"
            }
        }
    }

    func running(onDemand: Bool = false, restart: ExtensionManifest.RestartPolicy = .onFailure,
                 noRestart: [Int32] = []) -> Lifecycle {
        var lifecycle = Lifecycle(onDemand: onDemand, restart: restart, noRestartExitCodes: noRestart, graceMilliseconds: 5_000)
        _ = lifecycle.handle(.begin)
        if onDemand { #expect(kinds(lifecycle.handle(.demand(explicitly: false))) == ["launch"]) }
        _ = lifecycle.handle(.launched(1))
        return lifecycle
    }

    @Test func aServiceStartsAtBeginAndAnOnDemandOneRestsUntilAsked() {
        var service = Lifecycle(onDemand: false, restart: .always, noRestartExitCodes: [], graceMilliseconds: 5_000)
        #expect(kinds(service.handle(.begin)) == ["launch"])
        #expect(service.state.name == "starting")
        var onDemand = Lifecycle(onDemand: true, restart: .always, noRestartExitCodes: [], graceMilliseconds: 5_000)
        #expect(onDemand.handle(.begin).isEmpty)
        #expect(onDemand.state.name == "idle")
        #expect(kinds(onDemand.handle(.demand(explicitly: false))) == ["launch"])
        _ = onDemand.handle(.launched(7))
        #expect(onDemand.launch == 7)
        #expect(onDemand.handle(.demand(explicitly: false)).isEmpty)
    }

    @Test func aCrashIsRestartedOnTheBackoffUntilTheCrashLoopLimit() {
        var lifecycle = running()
        var delays: [String] = []
        for launch in 2...(CrashLoopDetector.crashLoopLimit + 1) {
            let actions = kinds(lifecycle.handle(exit(.signaled(11), lifecycle)))
            if lifecycle.state.isFailed {
                #expect(actions == ["endLaunch(\(launch - 1))", "tellExit(crashed, plain)", "fail", "gone(relaunching: false)"])
                break
            }
            #expect(lifecycle.state.name == "waiting")
            delays.append(actions.last ?? "")
            #expect(actions.contains("gone(relaunching: true)"))
            #expect(kinds(lifecycle.handle(.startDue(restart: true))) == ["countRestart", "launch"])
            _ = lifecycle.handle(.launched(launch))
        }
        #expect(lifecycle.state.isFailed)
        #expect(lifecycle.restarts == delays.count)
        #expect(delays == ["scheduleStart(100, restart: true)", "scheduleStart(200, restart: true)",
                           "scheduleStart(400, restart: true)", "scheduleStart(800, restart: true)"])
        // Only the user starts it again, afresh.
        #expect(lifecycle.handle(.demand(explicitly: false)).isEmpty)
        #expect(kinds(lifecycle.handle(.demand(explicitly: true))) == ["launch"])
    }

    @Test func exitCodesTheManifestListsAreNotRestarted() {
        var lifecycle = running(noRestart: [4])
        let actions = lifecycle.handle(exit(.exited(4), lifecycle))
        #expect(kinds(actions) == ["endLaunch(1)", "tellExit(exited, plain)", "fail", "gone(relaunching: false)"])
        #expect(actions.contains { action in
            guard case .fail(let why) = action else { return false }
            return why == "it exited with status 4, which its manifest lists in noRestartExitCodes; not restarting it"
        })
        #expect(lifecycle.state.isFailed)
        var clean = running()
        _ = clean.handle(exit(.exited(0), clean))
        #expect(clean.state.name == "stopped")
    }

    @Test func anIdleEndNoticesThenEndsAndWorkMeanwhileRelaunches() {
        var lifecycle = running(onDemand: true)
        #expect(kinds(lifecycle.handle(.idleTimedOut)) == ["noticeIdleEnd", "armEndClock(1000)"])
        #expect(lifecycle.state.name == "stopping")
        // A push while it is on its way out: let it go, then launch anew.
        #expect(lifecycle.handle(.demand(explicitly: false)).isEmpty)
        #expect(kinds(lifecycle.handle(exit(.signaled(15), lifecycle)))
                == ["endLaunch(1)", "tellExit(idle, endedIdle)", "gone(relaunching: true)", "launch"])
        // Without work meanwhile, it rests; an idle end is no failure.
        _ = lifecycle.handle(.launched(2))
        _ = lifecycle.handle(.idleTimedOut)
        #expect(kinds(lifecycle.handle(exit(.exited(0), lifecycle)))
                == ["endLaunch(2)", "tellExit(idle, endedIdle)", "gone(relaunching: false)"])
        #expect(lifecycle.state.isIdle)
    }

    /// Work in flight holds off an idle end (the end of the last work
    /// starts the clock again); a waiter for a hello starts the clock again
    /// instead; an exit forgets the work that died with it.
    @Test func workHoldsOffAnIdleEndAndHelloWaitersStartTheClockAgain() {
        var lifecycle = running(onDemand: true)
        #expect(kinds(lifecycle.handle(.workBegan)) == ["armIdleClock"])
        #expect(lifecycle.handle(.idleTimedOut).isEmpty)
        #expect(lifecycle.state.name == "running")
        #expect(kinds(lifecycle.handle(.workEnded)) == ["armIdleClock"])
        #expect(lifecycle.handle(.helloWaiters(change: 1)).isEmpty)
        #expect(kinds(lifecycle.handle(.idleTimedOut)) == ["armIdleClock"])
        #expect(lifecycle.state.name == "running")
        _ = lifecycle.handle(.helloWaiters(change: -1))
        #expect(kinds(lifecycle.handle(.idleTimedOut)) == ["noticeIdleEnd", "armEndClock(1000)"])
        // Ending, it has no idle clock.
        #expect(lifecycle.handle(.activity).isEmpty)
        // Work that was in flight to an instance that died is not the next one's.
        var crashed = running(onDemand: true)
        _ = crashed.handle(.workBegan)
        _ = crashed.handle(exit(.signaled(9), crashed))
        _ = crashed.handle(.demand(explicitly: false))
        _ = crashed.handle(.launched(2))
        #expect(kinds(crashed.handle(.idleTimedOut)) == ["noticeIdleEnd", "armEndClock(1000)"])
        // A service has no idle clock.
        var service = running()
        #expect(service.handle(.workBegan).isEmpty)
        #expect(service.handle(.activity).isEmpty)
    }

    @Test func aStopEndsItOnceAndWinsOverAnIdleEnd() {
        var lifecycle = running(onDemand: true)
        _ = lifecycle.handle(.idleTimedOut)
        _ = lifecycle.handle(.demand(explicitly: false))
        #expect(kinds(lifecycle.handle(.stop(then: {}))) == ["cancelWaits", "terminate", "armEndClock(5000)"])
        // A second stop waits with the first; nothing relaunches after it.
        #expect(lifecycle.handle(.stop(then: {})).isEmpty)
        #expect(kinds(lifecycle.handle(exit(.signaled(15), lifecycle)))
                == ["endLaunch(1, 2 waiting)", "tellExit(stopped, plain)", "gone(relaunching: false)"])
        #expect(lifecycle.state.isIdle)
        var service = running()
        _ = service.handle(.stop(then: {}))
        _ = service.handle(exit(.exited(0), service))
        #expect(service.state.name == "stopped")
    }

    /// systemd's stop states: an idle end is told, SIGTERM a moment later,
    /// SIGKILL after the grace, and nothing after that but the exit; a
    /// second stop keeps the first's clock (it must not put SIGKILL off).
    @Test func anEndGoesFromNoticeToSIGTERMToSIGKILLOnItsClock() {
        var idle = running(onDemand: true)
        #expect(kinds(idle.handle(.idleTimedOut)) == ["noticeIdleEnd", "armEndClock(1000)"])
        #expect(kinds(idle.handle(.endClockRanOut)) == ["terminate", "armEndClock(5000)"])
        #expect(kinds(idle.handle(.endClockRanOut)) == ["kill(idle)"])
        #expect(idle.handle(.endClockRanOut).isEmpty)
        #expect(idle.ending == .idle)

        var stopped = running()
        var heard = 0
        #expect(kinds(stopped.handle(.stop(then: { heard += 1 }))) == ["cancelWaits", "terminate", "armEndClock(5000)"])
        #expect(stopped.handle(.stop(then: { heard += 1 })).isEmpty)
        #expect(kinds(stopped.handle(.endClockRanOut)) == ["kill(stopped)"])
        guard case .endLaunch(_, let waiters) = stopped.handle(exit(.signaled(9), stopped)).first else {
            Issue.record("no endLaunch")
            return
        }
        #expect(heard == 0)  // not before its leftovers are gone
        for waiter in waiters { waiter() }
        #expect(heard == 2)

        // A stop during an idle end's notice sends its SIGTERM now.
        var noticed = running(onDemand: true)
        _ = noticed.handle(.idleTimedOut)
        #expect(kinds(noticed.handle(.stop(then: {}))) == ["cancelWaits", "terminate", "armEndClock(5000)"])
        #expect(noticed.ending == .stopped)
        // A verdict during an idle end kills at once; the grace then sends nothing more.
        var judged = running(onDemand: true)
        _ = judged.handle(.idleTimedOut)
        #expect(kinds(judged.handle(.unresponsive)) == ["kill(unresponsive)"])
        #expect(judged.handle(.endClockRanOut).isEmpty)
        // With no grace for a notice, SIGTERM comes with it.
        var hasty = Lifecycle(onDemand: true, restart: .onFailure, noRestartExitCodes: [], graceMilliseconds: 0)
        _ = hasty.handle(.begin)
        _ = hasty.handle(.demand(explicitly: false))
        _ = hasty.handle(.launched(1))
        #expect(kinds(hasty.handle(.idleTimedOut)) == ["noticeIdleEnd", "terminate", "armEndClock(0)"])
    }

    @Test func aVerdictKillsOnceAndIsTheExitsReason() {
        var lifecycle = running()
        #expect(kinds(lifecycle.handle(.overDiskLimit)) == ["kill(disk)"])
        #expect(lifecycle.handle(.unresponsive).isEmpty)
        #expect(lifecycle.ending == .disk)
        let actions = kinds(lifecycle.handle(exit(.signaled(9), lifecycle)))
        #expect(actions.contains("tellExit(disk, restarting(afterMilliseconds: 100))"))
        // Being stopped, a verdict changes nothing.
        var stopping = running()
        _ = stopping.handle(.stop(then: {}))
        #expect(stopping.handle(.unresponsive).isEmpty)
    }

    @Test func aShortageIsRetriedNeverFailedAndABrokenLaunchFails() {
        var lifecycle = Lifecycle(onDemand: false, restart: .always, noRestartExitCodes: [], graceMilliseconds: 5_000)
        _ = lifecycle.handle(.begin)
        #expect(kinds(lifecycle.handle(.launchFailed(.shortage("EMFILE"))))
                == ["tellRetry", "scheduleStart(100, restart: false)"])
        #expect(kinds(lifecycle.handle(.startDue(restart: false))) == ["launch"])
        #expect(kinds(lifecycle.handle(.launchFailed(.shortage("EMFILE"))))
                == ["tellRetry", "scheduleStart(200, restart: false)"])
        _ = lifecycle.handle(.startDue(restart: false))
        #expect(kinds(lifecycle.handle(.launchFailed(.broken("no such file")))) == ["fail", "gone(relaunching: false)"])
        #expect(lifecycle.state.isFailed)
    }

    @Test func anInstanceStartedByHandIsWaitedFor() {
        var service = Lifecycle(onDemand: false, restart: .always, noRestartExitCodes: [], graceMilliseconds: 5_000)
        _ = service.handle(.begin)
        #expect(kinds(service.handle(.heldElsewhere)) == ["watchExternal"])
        #expect(service.state.name == "external")
        #expect(kinds(service.handle(.externalEnded)) == ["launch"])
        var onDemand = Lifecycle(onDemand: true, restart: .always, noRestartExitCodes: [], graceMilliseconds: 5_000)
        _ = onDemand.handle(.begin)
        _ = onDemand.handle(.demand(explicitly: false))
        _ = onDemand.handle(.heldElsewhere)
        // Its work went to the other instance: it rests until asked.
        #expect(kinds(onDemand.handle(.externalEnded)) == ["gone(relaunching: false)"])
        #expect(onDemand.state.isIdle)
    }

    @Test func aStopWithNothingRunningAnswersAtOnce() {
        var lifecycle = Lifecycle(onDemand: false, restart: .always, noRestartExitCodes: [], graceMilliseconds: 5_000)
        _ = lifecycle.handle(.begin)
        _ = lifecycle.handle(.launchFailed(.shortage("EAGAIN")))
        #expect(kinds(lifecycle.handle(.stop(then: {}))) == ["cancelWaits", "gone(relaunching: false)", "answerStop"])
        #expect(lifecycle.state.name == "stopped")
        #expect(lifecycle.handle(.startDue(restart: true)).isEmpty)
        // An outcome that comes when no launch was asked for changes nothing.
        #expect(lifecycle.handle(.launched(9)).isEmpty)
        #expect(lifecycle.handle(.heldElsewhere).isEmpty)
        #expect(lifecycle.state.name == "stopped")
    }
}
