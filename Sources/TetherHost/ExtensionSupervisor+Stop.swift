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

/// Ending a launch: TERM, the grace, KILL, for its whole tree, and what
/// is left of it once its main process is gone.
extension ExtensionSupervisor {
    /// The whole group, which holds the main process too; without a group
    /// (never spawned as one), the main process alone. Its cgroup's
    /// processes too: SIGKILL by `cgroup.kill`, the whole tree at once.
    func signal(_ signal: Int32) {
        guard let launch = lifecycle.launch else { return }
        if launch.group > 0 {
            _ = kill(-launch.group, signal)
        } else {
            try? launch.process.signal(signal)
        }
        // In its own world it is its PID namespace's init, which the kernel
        // spares every signal it has no handler for: the SIGTERM it would
        // die of elsewhere (left to its default) is a SIGKILL here. Unless
        // its hello said it ends on SIGTERM: reading each one's signal mask
        // (and the kernel's flushing what that read cached, at its reaping)
        // was a tenth of the host's work in a stop of 3,000. One that lied
        // waits out its grace.
        if signal == SIGTERM, launch.ownWorld, endsOnSigterm != launch.process.pid,
           ProcessStatistics.defaults(pid: launch.process.pid, signal: SIGTERM) == true {
            try? launch.process.signal(SIGKILL)
        }
        if signal == SIGKILL { launch.cgroup?.kill() } else { launch.cgroup?.signalAll(signal) }
    }

    /// The main process is gone; its group may not be. The group's id stays
    /// reserved while any member lives, so signals reach only the leftovers
    /// (seccomp keeps a confined launch's processes in it). SIGTERM now,
    /// SIGKILL after the grace; with a cgroup, leftovers that left the group
    /// too. Once none is left (checked every 20 ms, the host reaping those
    /// it adopted), or a moment after the SIGKILL if one cannot die
    /// (uninterruptible sleep), the cgroup is removed, then the TMPDIR, and
    /// then `whenGone` runs.
    func endLeftovers(of launch: ExtensionLaunch, whenGone: (() -> Void)? = nil) {
        let leftovers = launch.group
        let cgroup = launch.cgroup
        // Its TMPDIR goes once nothing of it can write there any more.
        let temporary: String? = launch.temporaryDirectory
        resources.sandbox.unwatchDisk(launch.diskUsage)
        self.leftovers.began(group: leftovers)
        let gone = { [weak self] in
            for then in self?.leftovers.ended(group: leftovers) ?? [] { then() }
            whenGone?()
        }
        let finish = { [resources] in
            resources.reaper.releaseGroup(leftovers)
            // A cgroup that cannot be removed keeps its TMPDIR for the next start.
            let removeTemporary = { (removed: Bool) in
                guard removed, let temporary else { return gone() }
                resources.sandbox.removeTemporaryDirectory(temporary, then: gone)
            }
            guard let cgroup else { return removeTemporary(true) }
            resources.sandbox.retire(cgroup, then: removeTemporary)
        }
        func alive() -> Bool {
            guard leftovers > 0 else { return cgroup?.isPopulated == true }
            _ = tether_reap_group(leftovers)
            return kill(-leftovers, 0) == 0 || cgroup?.isPopulated == true
        }
        let ender = GracefulStop(loop: resources.loop)
        ender.begin(grace: resources.graceMilliseconds) { signal in
            if leftovers > 0 { _ = kill(-leftovers, signal) }
            if signal == SIGKILL { cgroup?.kill() } else { cgroup?.signalAll(signal) }
        }
        guard alive() else {
            ender.cancel()
            return finish()
        }
        let started = resources.loop.now
        let timer = LoopTimer(loop: resources.loop)
        timer.start(afterMilliseconds: 20, repeatMilliseconds: 20) { [resources] in
            // Past a SIGKILL, one that cannot die (uninterruptible sleep)
            // is waited for a moment only.
            guard !alive() || resources.loop.now - started >= resources.graceMilliseconds + 2_000 else { return }
            ender.cancel()
            timer.close()
            finish()
        }
    }

    /// SIGTERM to its whole process group, then SIGKILL after the grace;
    /// `completion` once it is gone, with its leftovers.
    func stop(completion: @escaping () -> Void) {
        output.resumeForStop()
        handle(.stop(then: completion))
    }
}
