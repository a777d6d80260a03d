import CTetherSystem
#if canImport(Glibc)
import Glibc
#endif
import TetherLoop

/// Reaps the host's children that no `ChildProcess` waits for. The host is
/// a child subreaper (`GroupReaper`): a background child that outlives its
/// extension's process comes to the host, and without a world of its own
/// (a PID namespace, whose first process inherits it instead) it would
/// stay a zombie until its extension ends, each holding a pid of its
/// cgroup's `pids.max`, or of the user's process limit.
final class OrphanReaper {
    private var watcher: SignalWatcher?

    init(loop: EventLoop) {
        watcher = try? SignalWatcher(loop: loop, signal: SIGCHLD) { _ in Self.reap() }
        OwnedChildren.whenOneIsReaped { Self.reap() }
    }

    /// At the stop: each launch's leftovers are reaped with its group.
    func close() {
        OwnedChildren.whenOneIsReaped(nil)
        watcher?.close()
        watcher = nil
    }

    /// The children that have ended, one at a time as the kernel names
    /// them, until one a `ChildProcess` waits for: it reaps that one
    /// itself, and this runs again once it has (`OwnedChildren`). The cost
    /// is the number of ended children, not of children.
    static func reap() {
        while case let pid = tether_ended_child(), pid > 0, !OwnedChildren.contains(pid) {
            var info = siginfo_t()
            _ = waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG)
        }
    }
}
