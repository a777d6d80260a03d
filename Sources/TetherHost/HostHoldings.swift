import TetherGroup
import TetherRPC

/// What a started host holds, from its start to the end of its way down.
/// Its state's (`Host.State`), so none of it is there before the start or
/// after the stop; let go in `Host+Shutdown`'s order, each piece set to
/// nil as it goes.
final class HostHoldings {
    /// Keeps the loop's inotify instance from before the locks (`start`).
    var inotifyAnchor: Inotify?
    /// The group directory's own lock (one host per group, by the kernel).
    var groupClaim: GroupClaim?
    var hostLock: LivenessLock?
    var server: RPCServer?
    /// What extensions left is ended, by it, if the host dies.
    var reaper: GroupReaper?
    /// Reaps what comes to the host and no one waits for, until the stop.
    var orphans: OrphanReaper?
    var sandbox: ExtensionSandbox?
}
