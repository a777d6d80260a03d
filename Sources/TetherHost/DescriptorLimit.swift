import Glibc
import TetherSandbox

/// The host's descriptor budget. At start it raises its soft limit to the
/// hard limit (as systemd services do), and it keeps a reserve that
/// connections never take, so the host can still open lock files, spawn an
/// extension (pipes) and answer `status` when peers have taken the rest.
package enum DescriptorLimit {
    /// Descriptors kept free of connections.
    package static let reserve = 96

    /// Raises the soft RLIMIT_NOFILE to the hard limit; returns the soft
    /// limit now in force.
    @discardableResult
    package static func raise() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return limit.rlim_cur > rlim_t(Int32.max) ? Int(Int32.max) : Int(limit.rlim_cur)
    }

    /// Descriptors an extension costs the host: its link (no client
    /// connection, outside the client limit), stdout and stderr pipes, its
    /// instance lock, its pidfd.
    package static let perExtension = 5

    /// Clients kept room for, whatever the manifests (where the limit has
    /// room at all): a status bar, the user's CLI and a script at once.
    package static let clientFloor = 64

    /// What the descriptors under `softLimit` (what `raise()` returned) are
    /// for, once the reserve, the sandbox's listings and the features have
    /// theirs: client connections (the configured number where every
    /// manifest could run beside them, never fewer than `clientFloor`), and
    /// the extensions that may run (or be launching) at once with the rest.
    /// Manifests that never run cost nothing.
    /// `worlds`: launches have worlds of their own, and read grants keep few.
    package static func budget(connections configured: Int, softLimit: Int, features: Int,
                               manifests: Int, worlds: Bool = false) -> (clients: Int, runningExtensions: Int) {
        // The sandbox's read-grant listings keep descriptors open between launches too.
        let listings = ReadGrants.descriptorBudget(softLimit: softLimit, few: worlds)
        let available = max(0, softLimit - reserve - listings - features)
        // Room for one extension at least, where there is one to run.
        let floor = min(clientFloor, available - perExtension * min(manifests, 1))
        let clients = max(1, min(configured, max(floor, available - perExtension * manifests)))
        return (clients, max(0, available - clients) / perExtension)
    }

    /// What an extension starts with: the conventional 1024 soft limit
    /// (programs using select(2) break above it), under the hard limit.
    package static let childSoftLimit = 1024
}
