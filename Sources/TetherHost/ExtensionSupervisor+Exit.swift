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

/// An exit: why it ended, and whether and when it runs again.
extension ExtensionSupervisor {
    func exited(_ status: TerminationStatus) {
        let ranFor = loop.now - startedAt
        process?.close()
        process = nil
        // The kernel says when its cgroup's memory limit killed it (else
        // the exit is as it happened, with the limit in force beside it).
        let killedForMemory = ending == nil && (cgroup?.memoryKills ?? 0) > 0
        let exit = ExtensionExit(status: status, intended: killedForMemory ? .memory : ending,
                                 memoryLimitMiB: sandboxReport.memoryLimitMiB)
        lastExit = exit
        metrics.extensionExited(manifest.name, reason: exit.reason.rawValue)
        var exitMetadata: Logger.Metadata = ["reason": .string(exit.reason.rawValue), "ranForMs": .number(ranFor),
                                             "restarts": .number(restarts)]
        switch status {
        case .exited(let code): exitMetadata["code"] = .number(code)
        case .signaled(let signal): exitMetadata["signal"] = .number(signal)
        }
        // Told once, by the branch below that knows what comes next.
        let why = exit.reason == .exited || exit.reason == .crashed ? "" : " (\(exit.reason.rawValue))"
        let tell = { [logger, manifest] (message: String?) in
            logger.event(.extensionExited, message ?? "extension '\(manifest.name)' \(status)\(why)", exitMetadata)
        }
        ending = nil
        work = 0
        idleTimer?.close()
        idleTimer = nil
        ender.cancel()
        // Whatever the extension left running in its group goes with it:
        // SIGTERM now, SIGKILL after the grace. A restart starts from
        // nothing, and a stop returns once nothing of it is left.
        let completions = stopping
        stopping.removeAll()
        endLeftovers(whenGone: completions.isEmpty ? nil : { for completion in completions { completion() } })
        releaseInstance()
        if !completions.isEmpty {
            tell(nil)
            state = isOnDemand ? .idle : .stopped
            // Waiters hear first: the last completion may close the host's socket.
            return relaunchIfAsked()
        }
        if exit.reason == .idle {
            tell("extension '\(manifest.name)' ended (idle)")
            state = .idle
            backoff = CrashLoopDetector()  // it ran and did its work
            return relaunchIfAsked()
        }
        if case .exited(let code) = status, manifest.noRestartExitCodes.contains(code) {
            tell(nil)
            fail("it exited with status \(code), which its manifest lists in noRestartExitCodes; not restarting it")
            return relaunchIfAsked()
        }
        if isOnDemand {
            tell(nil)
            // Launched for work; the next work launches it again. A crash
            // loop still marks it failed.
            if status == .exited(0) { backoff = CrashLoopDetector() }  // it ran and ended well
            if status != .exited(0), backoff.delayAfterFailure(ranFor: ranFor) == nil {
                fail("\(status) \(CrashLoopDetector.crashLoopLimit) times in a row, each within "
                     + "\(CrashLoopDetector.stableAfter / 1000) s of starting; not launching it again")
                return relaunchIfAsked()
            }
            state = .idle
            return relaunchIfAsked()
        }
        let wantsRestart = switch manifest.restart {
        case .always: true
        case .onFailure: status != .exited(0)
        case .never: false
        }
        guard wantsRestart else {
            tell(nil)
            state = .stopped
            return relaunchIfAsked()
        }
        guard let delay = backoff.delayAfterFailure(ranFor: ranFor) else {
            tell(nil)
            fail("\(status) \(CrashLoopDetector.crashLoopLimit) times in a row, each within "
                 + "\(CrashLoopDetector.stableAfter / 1000) s of starting; not restarting it")
            return relaunchIfAsked()
        }
        state = .waiting
        tell("extension '\(manifest.name)' \(status)\(why); restarting in \(delay) ms")
        onGone?(true)
        scheduleStart(after: delay, countsAsRestart: true)
    }

    /// After an exit: launch again if work arrived while it was ending;
    /// else whatever waits for its hello hears that it will not come.
    func relaunchIfAsked() {
        let again = relaunchAfterExit && state != .failed
        relaunchAfterExit = false
        onGone?(again)
        if again { start() }
    }

    func scheduleStart(after delay: UInt64, countsAsRestart: Bool) {
        let timer = restartTimer ?? LoopTimer(loop: loop)
        restartTimer = timer
        timer.start(afterMilliseconds: delay) { [unowned self] in
            if countsAsRestart {
                self.restarts += 1
                self.metrics.extensionRestarted(self.manifest.name)
                self.logger.event(.extensionRestarted, "extension '\(self.manifest.name)' restarting (restart \(self.restarts))",
                                  ["restarts": .number(self.restarts)])
            }
            self.start()
        }
    }
}
