import Glibc
import Logging
import TetherGroup
import TetherLog
import TetherLoop

/// What the lifecycle decides, carried out: timers, signals, the lock's
/// watch, the log, and what the host hears.
extension ExtensionSupervisor {
    func perform(_ action: Lifecycle.Action) {
        switch action {
        case .launch:
            handle(launch())
        case .watchExternal:
            watchExternalInstance()
        case .scheduleStart(let delay, let restart):
            setClock(afterMilliseconds: delay) { [unowned self] in self.handle(.startDue(restart: restart)) }
        case .armIdleClock:
            setClock(afterMilliseconds: manifest.idleTimeoutMilliseconds) { [unowned self] in self.handle(.idleTimedOut) }
        case .countRestart:
            resources.metrics.extensionRestarted(manifest.name)
            logger.event(.extensionRestarted, "extension '\(manifest.name)' restarting (restart \(restarts))",
                         ["restarts": .number(restarts)])
        case .cancelWaits:
            stopClock()
            externalWatcher?.close()
            externalWatcher = nil
        case .noticeIdleEnd:
            logger.info("extension '\(manifest.name)' is idle (nothing for \(manifest.idleTimeoutMilliseconds / 1000) s); ending it")
            onNotice?(.willTerminate)
        case .armEndClock(let delay):
            setClock(afterMilliseconds: delay) { [unowned self] in self.handle(.endClockRanOut) }
        case .terminate:
            signal(SIGTERM)
        case .kill:
            signal(SIGKILL)
        case .endLaunch(let launch, let waiters):
            endLaunch(launch, waiters: waiters)
        case .answerStop(let waiter):
            // An ended launch still being cleared: answered once it is.
            if !leftovers.whenCleared(waiter) { waiter() }
        case .tellExit(let exit, let note, let ranFor):
            tell(exit, note, ranFor: ranFor)
        case .tellRetry(let reason, let delay):
            logger.warning("extension '\(manifest.name)' \(reason); retrying in \(delay) ms")
        case .fail(let reason):
            var metadata: Logger.Metadata = ["reason": .string(reason), "restarts": .number(restarts)]
            if let lastExit { metadata["lastExit"] = .string(lastExit.reason.rawValue) }
            logger.event(.extensionFailed, level: .error, "extension '\(manifest.name)' failed: \(reason)", metadata)
        case .gone(let relaunching):
            onNotice?(.gone(relaunching: relaunching))
        }
    }

    /// An instance started by hand holds the lock: run ours once it is gone.
    private func watchExternalInstance() {
        logger.info("extension '\(manifest.name)' is already running outside the host; waiting for it to end")
        do {
            externalWatcher = try LockWatcher(loop: resources.loop, path: lockPath) { [unowned self] status in
                guard !status.running else { return }
                self.externalWatcher?.close()
                self.externalWatcher = nil
                self.handle(.externalEnded)
            }
        } catch {
            handle(.launchFailed(.broken("cannot watch its instance lock: \(error)")))
        }
    }

    /// The exit, told once, with what comes next where that adds to it.
    private func tell(_ exit: ExtensionExit, _ note: Lifecycle.ExitNote, ranFor: UInt64) {
        var metadata: Logger.Metadata = ["reason": .string(exit.reason.rawValue), "ranForMs": .number(ranFor),
                                         "restarts": .number(restarts)]
        switch exit.status {
        case .exited(let code): metadata["code"] = .number(code)
        case .signaled(let signal): metadata["signal"] = .number(signal)
        }
        let why = exit.reason == .exited || exit.reason == .crashed ? "" : " (\(exit.reason.rawValue))"
        let message = switch note {
        case .plain: "extension '\(manifest.name)' \(exit.status)\(why)"
        case .endedIdle: "extension '\(manifest.name)' ended (idle)"
        case .restarting(let delay): "extension '\(manifest.name)' \(exit.status)\(why); restarting in \(delay) ms"
        }
        logger.event(.extensionExited, "\(message)", metadata)
    }
}
