import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Logging
import TetherAuth
import TetherGroup
import TetherHTTP
import TetherIPC
import TetherLog
import TetherLoop
import TetherManifest

/// The host's one way down: features released, clients told, every
/// extension stopped, then the socket, leftovers and the lock, in that order.
extension Host {
    /// Stops features, tells clients, stops every extension (SIGTERM, then
    /// SIGKILL after the grace period), closes the socket, drops the lock.
    /// A host never started stops at once.
    package func shutdown(_ completion: @escaping () -> Void) {
        if stopUnstarted() { return completion() }
        guard beginStopping(), let held else { return }
        metrics.closing = true
        // Each launch's leftovers are reaped with its group from here on.
        held.orphans?.close()
        held.orphans = nil
        logger.event(.hostStopping, level: .notice, "tether host stopping",
                     ["extensions": .number(supervisors.count), "features": .number(features.count)])
        defaultsWatcher?.close()
        defaultsWatcher = nil
        credentialsWatcher?.close()
        credentialsWatcher = nil
        desktop.close()
        stopInputMethod()
        features.releaseAll()
        held.server?.broadcast(HostNotification.stopping)
        var remaining = supervisors.count
        let release = { [unowned self] in
            // Leftovers still in their grace: their cgroups are killed, and
            // their temporary directories removed while the lock keeps a
            // next host from making new ones.
            held.sandbox?.killLeftoverCgroups()
            held.sandbox?.removeLeftovers(of: self.configuration.manifests)
            held.sandbox?.removeParentIfEmpty()
            // Under the lock still: no mark of a count outlives the counting.
            self.endGroupSize()
            held.hostLock?.release()
            held.hostLock = nil
            held.groupClaim = nil
            // Groups still listed (leftovers within their grace) are the
            // reaper's to end now.
            held.reaper?.close()
            held.reaper = nil
            held.inotifyAnchor?.close()
            held.inotifyAnchor = nil
            self.endStopping()
            completion()
        }
        let finish = {
            held.server?.close()
            held.server = nil
            // Temporary directories still being removed end first.
            guard let sandbox = held.sandbox else { return release() }
            sandbox.afterRemovals(release)
        }
        guard remaining > 0 else { return finish() }
        for supervisor in supervisors.all {
            supervisor.stop {
                remaining -= 1
                if remaining == 0 { finish() }
            }
        }
    }
}
