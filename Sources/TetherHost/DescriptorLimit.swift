import Glibc
import TetherSandbox

/// The host's descriptor budget. At start it raises its soft limit to the
/// hard limit (as systemd services do), and it keeps a reserve that
/// connections never take, so the host can still open lock files, spawn an
/// extension (pipes) and answer `status` when peers have taken the rest.
public enum DescriptorLimit {
    /// Descriptors kept free of connections.
    public static let reserve = 96

    /// Raises the soft RLIMIT_NOFILE to the hard limit; returns the soft
    /// limit now in force.
    @discardableResult
    public static func raise() -> Int {
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
    public static let perExtension = 5

    /// Connections allowed: the configured number, less what would eat into
    /// the reserve once every feature and extension has its descriptors,
    /// under `softLimit` (what `raise()` returned).
    public static func connectionCeiling(_ configured: Int, softLimit: Int, features: Int, extensions: Int) -> Int {
        // The sandbox's read-grant listings keep descriptors open between launches too.
        let listings = ReadGrants.descriptorBudget(softLimit: softLimit)
        return max(1, min(configured, softLimit - reserve - listings - features - perExtension * extensions))
    }

    /// What an extension starts with: the conventional 1024 soft limit
    /// (programs using select(2) break above it), under the hard limit.
    public static let childSoftLimit = 1024
}
