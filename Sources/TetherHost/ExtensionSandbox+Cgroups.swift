import Logging
import TetherSandbox

/// The cgroup the host's extensions run in, claimed once at the start.
extension ExtensionSandbox {
    /// A cgroup v2 subtree delegated to the host (systemd `Delegate=yes`):
    /// each launch gets a cgroup of its own there. Anywhere else, none.
    /// Where the host's own cgroup is not delegated, it asks the user's
    /// manager for a scope of its own that is (invariant 26).
    static func claimCgroups(group: String, logger: Logger) -> DelegatedCgroup? {
        var claimed = DelegatedCgroup.claim(group: group, authority: ServiceManagerDelegation.delegates)
        if case .failure(.notDelegated(let path)) = claimed {
            switch ServiceManagerDelegation.startScope(group: group) {
            case .success(let scope):
                logger.info("the host's cgroup \(path) is not delegated: the user's service manager gave it \(scope.name)")
                claimed = DelegatedCgroup.claim(group: group, authority: ServiceManagerDelegation.delegates)
            case .failure(let failure):
                let line = "no scope of its own from the user's service manager (\(failure.reason))"
                failure.noManager ? logger.debug("\(line)") : logger.warning("\(line)")
            }
        }
        switch claimed {
        case .success(let cgroups):
            let controllers = cgroups.controllers.isEmpty ? "no controllers: memory by RLIMIT_DATA"
                : cgroups.controllers.sorted().joined(separator: ", ")
            logger.info("extensions run in cgroups of their own under \(cgroups.path) (\(controllers))")
            return cgroups
        case .failure(let reason):
            switch reason {
            case .noHierarchy, .notDelegated:
                logger.debug("extensions run without cgroups: \(reason)")
            case .failed:
                logger.warning("extensions run without cgroups: \(reason)")
            }
            return nil
        }
    }
}
