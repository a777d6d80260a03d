import Logging
import TetherIPC
import TetherSandbox

/// The cgroup the host's extensions run in, claimed once at the start.
extension ExtensionSandbox {
    /// A cgroup v2 subtree delegated to the host (systemd `Delegate=yes`):
    /// each launch gets a cgroup of its own there. Anywhere else, none.
    /// Where the host's own cgroup is not delegated, it asks the user's
    /// manager for a scope of its own that is (invariant 26).
    /// With what `status` says of it: where none, why and the fix.
    static func claimCgroups(group: String, logger: Logger) -> (DelegatedCgroup?, CgroupsStatus) {
        var claimed = DelegatedCgroup.claim(group: group, authority: ServiceManagerDelegation.delegates)
        var scopeRefused: String?
        if case .failure(.notDelegated(let path)) = claimed {
            switch ServiceManagerDelegation.startScope(group: group) {
            case .success(let scope):
                logger.info("the host's cgroup \(path) is not delegated: the user's service manager gave it \(scope.name)")
                claimed = DelegatedCgroup.claim(group: group, authority: ServiceManagerDelegation.delegates)
            case .failure(let failure):
                let line = "no scope of its own from the user's service manager (\(failure.reason))"
                failure.noManager ? logger.debug("\(line)") : logger.warning("\(line)")
                scopeRefused = failure.noManager ? "no user service manager answers on D-Bus (\(failure.reason))" : failure.reason
            }
        }
        switch claimed {
        case .success(let cgroups):
            let status = CgroupsStatus(path: cgroups.path, controllers: cgroups.controllers.sorted())
            logger.info("\(status.text)")
            return (cgroups, status)
        case .failure(let reason):
            switch reason {
            case .noHierarchy, .notDelegated:
                logger.debug("extensions run without cgroups: \(reason)")
            case .failed:
                logger.warning("extensions run without cgroups: \(reason)")
            }
            let cause = switch reason {
            case .notDelegated(let path): "the host's cgroup \(path) is not delegated to it"
            default: reason.description
            }
            let why = [cause, scopeRefused].compactMap { $0 }.joined(separator: ", and ")
            let fix: String? = switch reason {
            case .notDelegated: MachineEnforcement.delegationFix
            case .noHierarchy: "boot with systemd.unified_cgroup_hierarchy=1 (the default since systemd 247)"
            case .failed: nil
            }
            return (nil, CgroupsStatus(reason: why, fix: fix))
        }
    }
}
