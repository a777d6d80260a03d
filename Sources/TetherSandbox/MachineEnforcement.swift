import CTetherSystem
#if canImport(Glibc)
import Glibc
#endif

/// What this machine enforces for extensions, one finding per mechanism,
/// each with the fix where there is one (`tether doctor`). It only looks:
/// no cgroup is claimed, made or changed.
package enum MachineEnforcement {
    package struct Finding: Sendable, Equatable {
        package let mechanism: String
        /// Whether the promise the mechanism backs holds here.
        package let enforced: Bool
        package let detail: String
        package let fix: String?

        package init(mechanism: String, enforced: Bool, detail: String, fix: String?) {
            self.mechanism = mechanism
            self.enforced = enforced
            self.detail = detail
            self.fix = fix
        }
    }

    /// Run under systemd with a cgroup of its own, delegated: a user
    /// manager's unit (found by asking the manager), or a system unit with
    /// `User=` (marked, and chowned to the user).
    package static let delegationFix = "run the host where the user's service manager runs: tether service install "
        + "(a user service; on a server, loginctl enable-linger USER first), or from a session that has one"

    /// `authority`: as `DelegatedCgroup.claim` asks the service manager.
    /// `scopeControllers`: where the cgroup is not delegated, the
    /// controllers a scope of the user's manager would get (the host asks
    /// for one), nil where no manager answers.
    package static func findings(support: KernelSupport = .current,
                                 authority: (String) -> Bool = { _ in false },
                                 scopeControllers: () -> Set<String>? = { nil }) -> [Finding] {
        var findings: [Finding] = []
        var offered: Set<String> = []
        let own = DelegatedCgroup.ownCgroup()
        switch DelegatedCgroup.candidate(in: own, authority: authority) {
        case .success(let (mount, path)):
            offered = CgroupFile.controllers(mount + path)
            findings.append(Finding(mechanism: "cgroup", enforced: true,
                                    detail: "cgroup v2, delegated: \(path) (each extension gets a cgroup of its own)", fix: nil))
        case .failure(.notDelegated(let path)):
            let mount = own?.mount ?? ""
            let hybrid = mount.hasSuffix("/unified")
            if !hybrid, let controllers = scopeControllers() {
                offered = controllers
                findings.append(Finding(mechanism: "cgroup", enforced: true, detail: """
                    cgroup v2; \(path) is not delegated, so the host asks the user's service manager for a scope \
                    of its own with Delegate=yes (each extension gets a cgroup of its own)
                    """, fix: nil))
            } else {
                findings.append(Finding(mechanism: "cgroup", enforced: false, detail: """
                    cgroup v2 at \(mount)\(hybrid ? " (a hybrid hierarchy: its controllers are on cgroup v1)" : ""), \
                    but \(path) is not delegated to this user, and no user service manager answers
                    """, fix: delegationFix))
            }
        case .failure:
            findings.append(Finding(mechanism: "cgroup", enforced: false, detail: "no cgroup v2 hierarchy (a v1 or hybrid machine)",
                                    fix: "boot with systemd.unified_cgroup_hierarchy=1 (the default since systemd 247)"))
        }
        let memory = offered.contains("memory")
        findings.append(Finding(
            mechanism: "memory", enforced: memory || support.seccomp,
            detail: memory ? "memory.max per extension (counts everything)"
                : support.seccomp ? "RLIMIT_DATA per process, with memfd, shared anonymous and growsdown mappings and SysV shared memory refused (seccomp); not counted: the processes it forks (each has its own), kernel buffers (sockets, pipes: at most 1,024 descriptors), files on a tmpfs TMPDIR (bounded by diskLimitMiB)"
                : "RLIMIT_DATA only: memfd and shared mappings are not counted",
            fix: memory ? nil : delegationFix))
        let pids = offered.contains("pids")
        findings.append(Finding(mechanism: "pids", enforced: pids,
                                detail: pids ? "pids.max per extension" : "no pids cap: a fork bomb is bounded only by RLIMIT_NPROC",
                                fix: pids ? nil : delegationFix))
        if let abi = support.landlockABI {
            var detail = "Landlock ABI \(abi): files"
            detail += support.landlockNetwork ? ", TCP" : " (no TCP rules: Linux 6.7+)"
            detail += support.landlockScopes ? ", signal and abstract-socket scoping" : " (no signal scoping: Linux 6.12+)"
            findings.append(Finding(mechanism: "landlock", enforced: support.landlockScopes, detail: detail,
                                    fix: support.landlockScopes ? nil : "Linux 6.12 or later"))
        } else {
            findings.append(Finding(mechanism: "landlock", enforced: false, detail: "no Landlock: files, TCP and signals unconfined",
                                    fix: "Linux 5.13+ with landlock in the boot's lsm= list (lsm=landlock,…)"))
        }
        let refused = ExtensionWorld.unavailable
        findings.append(Finding(
            mechanism: "namespaces", enforced: refused == nil,
            detail: refused.map { "no world of its own for an extension (\($0)): each sees the machine's files (Landlock limits what it reads), processes and abstract sockets, and its TMPDIR is counted by the host" }
                ?? "a world of its own per extension: user, mount, PID, IPC and cgroup namespaces (and network for a role without), a read-only view of what programs need, a tmpfs TMPDIR the kernel counts",
            fix: refused == nil ? nil : "allow unprivileged user namespaces: sysctl kernel.unprivileged_userns_clone=1 (Debian), or an AppArmor profile for tether granting userns (Ubuntu 23.10+: kernel.apparmor_restrict_unprivileged_userns)"))
        findings.append(Finding(mechanism: "seccomp", enforced: support.seccomp,
                                detail: support.seccomp ? "seccomp filters (sockets, locks, ptrace, setsid, memfd)" : "no seccomp filter",
                                fix: support.seccomp ? nil : "a kernel with CONFIG_SECCOMP_FILTER, and libseccomp2"))
        var data = rlimit()
        let settable = getrlimit(__rlimit_resource_t(RLIMIT_DATA.rawValue), &data) == 0
        findings.append(Finding(mechanism: "rlimits", enforced: settable,
                                detail: settable ? "RLIMIT_DATA per extension (hard limit \(data.rlim_max == rlim_t.max ? "unlimited" : "\(data.rlim_max >> 20) MiB"))"
                                    : "RLIMIT_DATA cannot be read", fix: nil))
        return findings
    }
}
