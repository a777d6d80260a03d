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
        // The extensions' own links hear it as each is signalled (`stop`).
        held.server?.broadcast(HostNotification.stopping, skipping: Set(links.keys))
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
        let each = {
            remaining -= 1
            if remaining == 0 { finish() }
        }
        // Those without a process first, all at once: they signal nothing,
        // and their waits (a restart's backoff, a launch slot) end now,
        // not after their turn.
        let running = supervisors.all.filter(\.hasProcess)
        for supervisor in supervisors.all where !supervisor.hasProcess { supervisor.stop(completion: each) }
        stop(running[...], each: each)
    }

    /// How many extensions a stop signals in one turn of the loop.
    static let stopsPerTurn = 32

    /// Signals `pending` a few at a time, a turn of the loop each, so that
    /// the exits that came meanwhile are reaped between: with thousands,
    /// their SIGTERMs and their reaping then share the CPUs with their
    /// exits, where signalling all first left the reaping to run alone
    /// once every extension had gone (a quarter of a stop of 3,000).
    /// Each launch's link hears the host stop as the stop signals it: told
    /// all at once, thousands woke to read it before the first was signalled.
    private func stop(_ pending: ArraySlice<ExtensionSupervisor>, each: @escaping () -> Void) {
        for supervisor in pending.prefix(Self.stopsPerTurn) {
            for key in linkKeys[supervisor.manifest.name] ?? [] {
                links[key]?.connection.notify(HostNotification.stopping)
            }
            supervisor.stop(completion: each)
        }
        nonisolated(unsafe) let rest = pending.dropFirst(Self.stopsPerTurn)  // touched on the loop only
        nonisolated(unsafe) let each = each  // run on the loop only
        guard !rest.isEmpty else { return }
        // Refused only by a loop that has finished: then here, at once.
        if !loop.execute({ [self] in stop(rest, each: each) }) { stop(rest, each: each) }
    }
}
