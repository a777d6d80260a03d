import CTetherSystem
import SystemPackage
import TetherGroup
import TetherLoop
#if canImport(Glibc)
import Glibc
#endif

/// One extension's kernel confinement, prepared from its policy in the
/// process that applies it: the host before a launch (the spawn's child
/// applies it just before exec), or an extension started by hand, to itself.
///
/// Files: a Landlock ruleset that allows reading everywhere (but other
/// extensions' temporary directories, and for a read-only role the
/// secrets: `ReadGrants`) and writing
/// only the private temporary directory, `/dev/null` and its kind, and the
/// group when the policy says so. Network, when denied: the seccomp filter
/// (every socket but `AF_UNIX`), plus Landlock's TCP rules where the kernel
/// has them. Signals: Landlock scoping (and abstract Unix sockets when
/// offline). Memory: the launch's cgroup (`memory.max`) where the host has
/// one, else `RLIMIT_DATA`.
///
/// A mechanism the kernel lacks is left out and named in `missing`. Rules
/// that could not be made for want of descriptors or memory are no
/// missing mechanism: `shortage` says so, and nothing is to run with it.
package final class Confinement {
    package let policy: SandboxPolicy
    package let support: KernelSupport
    /// What confines the extension, as `status --json` shows it.
    package let report: SandboxReport
    /// Protections the policy asks for that this kernel cannot give
    /// ("files", "network", "signals"), with why.
    package let missing: [String]
    /// Descriptors or memory ran out while the rules were made: the
    /// confinement is short of what the policy asks, for a moment; the
    /// caller runs nothing with it (a launch is tried again later).
    package let shortage: Errno?
    /// The launch's cgroup, if the host has a delegated one.
    package let cgroup: ExtensionCgroup?
    /// The rules were built ahead of the launch (and were still current).
    package let usedPreparedRuleset: Bool
    private let ruleset: LandlockRuleset?
    private let filter: [UInt8]?

    /// `prepared`: rules built ahead of the launch (`LandlockRuleset.prepare`),
    /// used only if they are what a build now would give; else built here.
    /// `world`: the launch runs in a world of its own, which hides by
    /// showing nothing: its rules are the few its view needs, built here.
    package init(policy: SandboxPolicy, support: KernelSupport = .current, cgroup: ExtensionCgroup? = nil,
                 prepared: LandlockRuleset? = nil, world: Bool = false) {
        self.policy = policy
        self.support = support
        self.cgroup = cgroup
        var missing: [String] = []
        var ruleset: LandlockRuleset?
        var filesBy = "none"
        var secretsHidden = false
        var usedPrepared = false
        var shortage: Errno?
        // Without a cgroup's memory.max, RLIMIT_DATA holds the limit, and
        // memory it does not count is refused (seccomp, and no /dev/zero to
        // map shared).
        let writableZero = LandlockRuleset.writableZero(policy, memoryByCgroup: cgroup?.memoryEnforced == true)
        if let abi = support.landlockABI {
            let made: Result<LandlockRuleset, Errno>
            if !world, let prepared, prepared.isCurrent(for: policy, abi: abi, writableZero: writableZero) {
                made = .success(prepared)
                usedPrepared = true
            } else {
                made = LandlockRuleset.build(policy, abi: abi, support: support, writableZero: writableZero, world: world)
            }
            switch made {
            case .success(let built):
                ruleset = built
                secretsHidden = built.hidden && policy.secrets != nil && !policy.groupWritable
                filesBy = "landlock ABI \(abi)"
                if !policy.groupWritable && !secretsHidden {
                    missing.append(policy.secrets == nil
                        ? "secrets (kept in the group: no secrets directory beside it, its parent not writable)"
                        : "secrets (a directory on the way to them cannot be listed)")
                }
                if !built.hidden && !policy.hiddenTemporaryRoots.isEmpty {
                    missing.append("temporary directories (others' readable: a directory on the way cannot be listed)")
                }
            case .failure(let error) where ReadGrants.isShortage(error.rawValue):
                shortage = error
            case .failure(let error):
                missing.append("files (Landlock refused the rules: \(error))")
            }
        } else {
            missing.append("files (no Landlock: Linux 5.13+ with landlock in the boot's lsm= list)")
        }
        let signalsScoped = ruleset != nil && support.landlockScopes
        if !signalsScoped {
            missing.append("signals (no Landlock ABI 6 scoping: Linux 6.12+)")
        }
        filter = support.seccomp ? SeccompFilter.program(network: policy.network, readOnly: !policy.groupWritable,
                                                         sharedMemory: writableZero,
                                                         unixSockets: policy.unixSockets) : nil
        if !policy.network && filter == nil {
            missing.append("network (no seccomp filter)")
        }
        self.ruleset = ruleset
        self.missing = missing
        self.shortage = shortage
        usedPreparedRuleset = usedPrepared
        report = SandboxReport(files: filesBy, networkDenied: !policy.network && filter != nil,
                               signalsScoped: signalsScoped, memoryLimitMiB: policy.memoryLimitMiB,
                               memoryByCgroup: cgroup?.memoryEnforced ?? false, cgroup: cgroup?.path,
                               sharedMemoryRefused: filter != nil, secretsHidden: secretsHidden)
    }

    /// Closes what building rulesets keeps open for the next launch (the
    /// entries read grants name): for a process that confines itself once.
    package static func releaseCaches() { ReadGrants.forget() }

    /// For the spawn: the child applies it, after `PR_SET_NO_NEW_PRIVS`.
    /// Valid while this object lives (it owns the ruleset) and the cgroup's
    /// `procs` is open.
    package var spawnConfinement: SpawnConfinement {
        // A cgroup limits the footprint; RLIMIT_DATA would count reserved
        // address space too, and refuse first.
        let dataLimit = cgroup?.memoryEnforced == true ? nil : policy.memoryLimitMiB.map { $0 * 1_048_576 }
        return SpawnConfinement(dataLimitBytes: dataLimit, fileSizeLimitBytes: policy.fileSizeLimitMiB.map { $0 * 1_048_576 },
                                landlockRuleset: ruleset?.descriptor ?? -1, seccompFilter: filter,
                                cgroupProcs: cgroup?.procs ?? -1)
    }

    /// Confines the calling process. Landlock and the capabilities bind
    /// the calling thread and the threads and children it makes later, so
    /// call it before starting threads; the seccomp filter reaches every
    /// thread. A refused limit never skips the rest.
    package func applyToSelf() throws(Errno) {
        if let shortage { throw shortage }
        var confinement = spawnConfinement
        confinement.cgroupProcs = -1
        let rc = confinement.withConfinement { applied in
            withUnsafePointer(to: applied) { tether_confine_self($0) }
        }
        guard rc == 0 else { throw Errno(rawValue: -rc) }
    }
}

/// What confines an extension (`status --json`'s `sandbox`).
package struct SandboxReport: Sendable, Equatable {
    /// "landlock ABI N", or "none".
    package var files: String
    package var networkDenied: Bool
    package var signalsScoped: Bool
    package var memoryLimitMiB: Int?
    /// The limit is the launch cgroup's `memory.max` (else `RLIMIT_DATA`).
    package var memoryByCgroup: Bool
    /// The launch's cgroup (its path in the hierarchy), if it has one.
    package var cgroup: String?
    /// Without the cgroup: memory RLIMIT_DATA does not count (memfd,
    /// shared mappings) is refused by seccomp.
    package var sharedMemoryRefused: Bool
    /// The group's secrets are out of its reach, even to read.
    package var secretsHidden: Bool
    /// It runs in a world of its own (`ExtensionWorld`), not the machine's.
    package var world = false

    package init(files: String, networkDenied: Bool, signalsScoped: Bool, memoryLimitMiB: Int?,
                 memoryByCgroup: Bool = false, cgroup: String? = nil, sharedMemoryRefused: Bool = false,
                 secretsHidden: Bool = false) {
        self.files = files
        self.networkDenied = networkDenied
        self.signalsScoped = signalsScoped
        self.memoryLimitMiB = memoryLimitMiB
        self.memoryByCgroup = memoryByCgroup
        self.cgroup = cgroup
        self.sharedMemoryRefused = sharedMemoryRefused
        self.secretsHidden = secretsHidden
    }

    /// How the memory limit is enforced, if there is one: "cgroup"
    /// (`memory.max` counts everything), "rlimit+seccomp" (`RLIMIT_DATA`,
    /// and what it does not count refused), or "rlimit" alone (no seccomp:
    /// memfd and shared mappings are not counted).
    package var memoryBy: String? {
        guard memoryLimitMiB != nil else { return nil }
        return memoryByCgroup ? "cgroup" : sharedMemoryRefused ? "rlimit+seccomp" : "rlimit"
    }
}
