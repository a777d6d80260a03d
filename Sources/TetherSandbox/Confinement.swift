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
/// A mechanism the kernel lacks is left out and named in `missing`.
public final class Confinement {
    public let policy: SandboxPolicy
    public let support: KernelSupport
    /// What confines the extension, as `status --json` shows it.
    public let report: SandboxReport
    /// Protections the policy asks for that this kernel cannot give
    /// ("files", "network", "signals"), with why.
    public let missing: [String]
    /// The launch's cgroup, if the host has a delegated one.
    public let cgroup: ExtensionCgroup?
    private let ruleset: Int32
    private let filter: [UInt8]?

    public init(policy: SandboxPolicy, support: KernelSupport = .current, cgroup: ExtensionCgroup? = nil) {
        self.policy = policy
        self.support = support
        self.cgroup = cgroup
        var missing: [String] = []
        var ruleset: Int32 = -1
        var filesBy = "none"
        var secretsHidden = false
        if let abi = support.landlockABI {
            let boundsSharedMemory = policy.memoryLimitMiB != nil && cgroup?.memoryEnforced != true
            switch Self.ruleset(policy, abi: abi, support: support, writableZero: !boundsSharedMemory) {
            case .success(let made):
                let hidden: Bool
                (ruleset, hidden) = made
                secretsHidden = hidden && policy.secrets != nil && !policy.groupWritable
                filesBy = "landlock ABI \(abi)"
                if !policy.groupWritable && !secretsHidden {
                    missing.append(policy.secrets == nil
                        ? "secrets (kept in the group: no secrets directory beside it, its parent not writable)"
                        : "secrets (a directory on the way to them cannot be listed, or descriptors ran out)")
                }
                if !hidden && !policy.hiddenTemporaryRoots.isEmpty {
                    missing.append("temporary directories (others' readable: a directory on the way cannot be listed, or descriptors ran out)")
                }
            case .failure(let error):
                missing.append("files (Landlock refused the rules: \(error))")
            }
        } else {
            missing.append("files (no Landlock: Linux 5.13+ with landlock in the boot's lsm= list)")
        }
        let signalsScoped = ruleset >= 0 && support.landlockScopes
        if !signalsScoped {
            missing.append("signals (no Landlock ABI 6 scoping: Linux 6.12+)")
        }
        // Without a cgroup's memory.max, RLIMIT_DATA holds the limit, and
        // memory it does not count is refused (seccomp, and no /dev/zero to
        // map shared).
        let boundsSharedMemory = policy.memoryLimitMiB != nil && cgroup?.memoryEnforced != true
        filter = support.seccomp ? SeccompFilter.program(network: policy.network, readOnly: !policy.groupWritable,
                                                         sharedMemory: !boundsSharedMemory,
                                                         unixSockets: policy.unixSockets) : nil
        if !policy.network && filter == nil {
            missing.append("network (no seccomp filter)")
        }
        self.ruleset = ruleset
        self.missing = missing
        report = SandboxReport(files: filesBy, networkDenied: !policy.network && filter != nil,
                               signalsScoped: signalsScoped, memoryLimitMiB: policy.memoryLimitMiB,
                               memoryByCgroup: cgroup?.memoryEnforced ?? false, cgroup: cgroup?.path,
                               sharedMemoryRefused: filter != nil, secretsHidden: secretsHidden)
    }

    /// Closes what building rulesets keeps open for the next launch (the
    /// entries read grants name): for a process that confines itself once.
    public static func releaseCaches() { ReadGrants.forget() }

    deinit {
        if ruleset >= 0 { close(ruleset) }
    }

    /// For the spawn: the child applies it, after `PR_SET_NO_NEW_PRIVS`.
    /// Valid while this object lives (it owns the ruleset) and the cgroup's
    /// `procs` is open.
    public var spawnConfinement: SpawnConfinement {
        // A cgroup limits the footprint; RLIMIT_DATA would count reserved
        // address space too, and refuse first.
        let dataLimit = cgroup?.memoryEnforced == true ? nil : policy.memoryLimitMiB.map { $0 * 1_048_576 }
        return SpawnConfinement(dataLimitBytes: dataLimit, fileSizeLimitBytes: policy.fileSizeLimitMiB.map { $0 * 1_048_576 },
                                landlockRuleset: ruleset, seccompFilter: filter, cgroupProcs: cgroup?.procs ?? -1)
    }

    /// Confines the calling process. Landlock and the capabilities bind
    /// the calling thread and the threads and children it makes later, so
    /// call it before starting threads; the seccomp filter reaches every
    /// thread. A refused limit never skips the rest.
    public func applyToSelf() throws(Errno) {
        var confinement = spawnConfinement
        confinement.cgroupProcs = -1
        let rc = confinement.withConfinement { applied in
            withUnsafePointer(to: applied) { tether_confine_self($0) }
        }
        guard rc == 0 else { throw Errno(rawValue: -rc) }
    }

    private static func ruleset(_ policy: SandboxPolicy, abi: Int, support: KernelSupport,
                                writableZero: Bool) -> Result<(Int32, hidden: Bool), Errno> {
        // Scopes: 2 signals (every role), 1 abstract Unix sockets (offline
        // ones: an abstract socket could reach a proxy outside).
        let scopes: Int32 = support.landlockScopes ? (policy.network ? 2 : 3) : 0
        let made = tether_landlock_ruleset(Int32(abi), policy.network ? 0 : 1, scopes)
        guard made >= 0 else { return .failure(Errno(rawValue: -made)) }
        // Access: 0 read, 1 write, 2 remove empty directories (no read), 3
        // files in a directory, 4 existing files in place.
        var rules: [(String, access: Int32, required: Bool)] = []
        // Every group's secrets this user has, wherever the group lives.
        let secrets = policy.groupWritable ? [] : (policy.secrets.map { [$0] } ?? []) + policy.otherSecrets
        // Every other extension's TMPDIR too, for every role (its own is granted below).
        let hidden = !(secrets.isEmpty && policy.hiddenTemporaryRoots.isEmpty)
            && ReadGrants.add(to: made, abi: Int32(abi), hiding: policy.hiddenTemporaryRoots, secrets: secrets)
        if !hidden { rules.append(("/", 0, true)) }
        if policy.groupWritable {
            // Parts of the group, never its top level (invariant 21); a
            // part the host could not make is not written.
            for (path, access) in GroupDirectory.extensionWrites(in: policy.group) {
                let code: Int32 = switch access {
                case .tree: 1
                case .files: 3
                case .existingFiles: 4
                }
                rules.append((path, code, false))
            }
            if let secrets = policy.secrets { rules.append((secrets, 1, false)) }
        }
        if let parent = policy.removesTemporaryDirectoryIn { rules.append((parent, 2, true)) }
        // What programs write to as a matter of course (not /dev/tty: a
        // terminal is reached through the descriptors it was given).
        // /dev/zero opened for writing could be mapped shared: memory no
        // RLIMIT_DATA counts.
        for device in ["/dev/null", "/dev/full"] + (writableZero ? ["/dev/zero"] : []) { rules.append((device, 1, false)) }
        for (path, access, required) in rules {
            let added = tether_landlock_allow(made, Int32(abi), path, access)
            if added < 0 && required {
                close(made)
                return .failure(Errno(rawValue: -added))
            }
        }
        if let temporary = policy.temporaryDirectory {
            // By descriptor: the directory checked (ours, a real directory)
            // is the one the rule covers.
            let directory = open(temporary, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            var info = stat()
            let error: Errno? = if directory < 0 {
                Errno(rawValue: errno)
            } else if fstat(directory, &info) != 0 || info.st_uid != geteuid() {
                .notPermitted
            } else {
                { (rc: Int32) in rc < 0 ? Errno(rawValue: -rc) : nil }(tether_landlock_allow_descriptor(made, Int32(abi), directory, 1))
            }
            if directory >= 0 { close(directory) }
            if let error {
                close(made)
                return .failure(error)
            }
        }
        return .success((made, hidden))
    }
}

/// What confines an extension (`status --json`'s `sandbox`).
public struct SandboxReport: Sendable, Equatable {
    /// "landlock ABI N", or "none".
    public var files: String
    public var networkDenied: Bool
    public var signalsScoped: Bool
    public var memoryLimitMiB: Int?
    /// The limit is the launch cgroup's `memory.max` (else `RLIMIT_DATA`).
    public var memoryByCgroup: Bool
    /// The launch's cgroup (its path in the hierarchy), if it has one.
    public var cgroup: String?
    /// Without the cgroup: memory RLIMIT_DATA does not count (memfd,
    /// shared mappings) is refused by seccomp.
    public var sharedMemoryRefused: Bool
    /// The group's secrets are out of its reach, even to read.
    public var secretsHidden: Bool

    public init(files: String, networkDenied: Bool, signalsScoped: Bool, memoryLimitMiB: Int?,
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
    public var memoryBy: String? {
        guard memoryLimitMiB != nil else { return nil }
        return memoryByCgroup ? "cgroup" : sharedMemoryRefused ? "rlimit+seccomp" : "rlimit"
    }
}
