import CTetherSystem
import SystemPackage
import TetherGroup
#if canImport(Glibc)
import Glibc
#endif

/// One launch's Landlock ruleset, built from its policy: read everywhere
/// but what is hidden (`ReadGrants`), write the group's parts the role may
/// write, `/dev/null` and its kind, and the private temporary directory.
///
/// It may be built ahead of its launch (the host keeps a spare per kind of
/// policy, so that a launch does not wait for hundreds of read rules). A
/// ruleset is then used only while `isCurrent` says a build now would give
/// the same rules: the same policy but for the temporary directory's name,
/// every directory whose entries were granted one by one unchanged, and
/// the temporary directory the same directory (renamed, not replaced).
package final class LandlockRuleset {
    /// The ruleset, close-on-exec; closed with this object.
    let descriptor: Int32
    /// What is hidden is hidden (else "/" was granted whole).
    let hidden: Bool
    private let policy: SandboxPolicy
    private let abi: Int
    private let writableZero: Bool
    private let listings: [DirectoryStamp]
    /// The temporary directory granted: its device and inode (a rename
    /// changes its times, not what it is).
    private let temporary: (device: UInt64, inode: UInt64)?

    private init(descriptor: Int32, hidden: Bool, policy: SandboxPolicy, abi: Int, writableZero: Bool,
                 listings: [DirectoryStamp], temporary: (device: UInt64, inode: UInt64)?) {
        self.descriptor = descriptor
        self.hidden = hidden
        self.policy = policy.kind
        self.abi = abi
        self.writableZero = writableZero
        self.listings = listings
        self.temporary = temporary
    }

    deinit { close(descriptor) }

    /// Builds a launch's rules ahead of it, as `Confinement` would with a
    /// cgroup that enforces memory (`memoryByCgroup`) or none. Nil where
    /// the kernel has no Landlock or refuses the rules: the launch then
    /// builds (and reports) its own.
    /// Nil too where it could not hide what the policy hides (descriptors
    /// ran out): a build at the launch may do better.
    package static func prepare(_ policy: SandboxPolicy, support: KernelSupport = .current,
                                memoryByCgroup: Bool) -> LandlockRuleset? {
        guard let abi = support.landlockABI,
              let ruleset = try? build(policy, abi: abi, support: support,
                                       writableZero: writableZero(policy, memoryByCgroup: memoryByCgroup)).get(),
              ruleset.hidden else { return nil }
        return ruleset
    }

    /// Kept out of reading (with the secrets): other extensions' TMPDIRs,
    /// and the group's instance locks, always (a lock on another's would
    /// make the host think it runs outside it).
    private static func hiddenPaths(_ policy: SandboxPolicy) -> [String] {
        policy.hiddenTemporaryRoots + [GroupDirectory.extensionLocksPath(of: policy.group)]
    }

    /// Every group's secrets this user has, wherever the group lives, for
    /// a role that does not write the group.
    private static func hiddenSecrets(_ policy: SandboxPolicy) -> [String] {
        policy.groupWritable ? [] : (policy.secrets.map { [$0] } ?? []) + policy.otherSecrets
    }

    /// Whether `/dev/zero` may be opened for writing: not when `RLIMIT_DATA`
    /// holds the memory limit, since a shared mapping of it is not counted.
    static func writableZero(_ policy: SandboxPolicy, memoryByCgroup: Bool) -> Bool {
        policy.memoryLimitMiB == nil || memoryByCgroup
    }

    /// True if these rules are what a build for `policy` would make now.
    func isCurrent(for policy: SandboxPolicy, abi: Int, writableZero: Bool) -> Bool {
        guard policy.kind == self.policy, abi == self.abi, writableZero == self.writableZero else { return false }
        // Rules that could not hide what the policy hides (descriptors ran
        // out: every directory granted whole) are never what a build now gives.
        guard hidden else { return false }
        switch (temporary, policy.temporaryDirectory) {
        case (nil, nil): break
        case (let granted?, let path?):
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR,
                  UInt64(info.st_dev) == granted.device, UInt64(info.st_ino) == granted.inode else { return false }
        default: return false
        }
        return listings.allSatisfy { $0.matches($0.path) }
    }

    /// `world`: for a launch in a world of its own (`ExtensionWorld`),
    /// which shows nothing these rules would hide and grants reading at
    /// each of its mounts: no read grants here, and no TMPDIR of the host's.
    static func build(_ policy: SandboxPolicy, abi: Int, support: KernelSupport,
                      writableZero: Bool, world: Bool = false) -> Result<LandlockRuleset, Errno> {
        // Scopes: 2 signals (every role), 1 abstract Unix sockets (offline
        // ones: an abstract socket could reach a proxy outside).
        let scopes: Int32 = support.landlockScopes ? (policy.network ? 2 : 3) : 0
        let made = tether_landlock_ruleset(Int32(abi), policy.network ? 0 : 1, scopes)
        guard made >= 0 else { return .failure(Errno(rawValue: -made)) }
        // Access: 0 read, 1 write, 2 remove empty directories (no read), 3
        // files in a directory, 4 existing files in place.
        var rules: [(String, access: Int32, required: Bool)] = []
        // Every other extension's TMPDIR too, for every role (its own is granted below).
        var listings: [DirectoryStamp] = []
        var hidden = world
        if !world {
            switch ReadGrants.add(to: made, abi: Int32(abi), hiding: hiddenPaths(policy),
                                  secrets: hiddenSecrets(policy),
                                  listings: &listings) {
            case .hidden: hidden = true
            case .cannotList: break
            case .outOfDescriptors:
                // Short for a moment: no launch with "/" granted whole for it.
                close(made)
                return .failure(.tooManyOpenFiles)
            }
        }
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
        var temporary: (device: UInt64, inode: UInt64)?
        if let path = policy.temporaryDirectory {
            // By descriptor: the directory checked (ours, a real directory)
            // is the one the rule covers.
            let directory = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
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
            temporary = (UInt64(info.st_dev), UInt64(info.st_ino))
        }
        return .success(LandlockRuleset(descriptor: made, hidden: hidden, policy: policy, abi: abi,
                                        writableZero: writableZero, listings: listings, temporary: temporary))
    }
}

/// A directory as it was when rules were built from it: the same inode,
/// and unchanged since (its entries are the ones granted).
struct DirectoryStamp {
    let path: String
    let device: UInt64
    let inode: UInt64
    let modified: timespec
    let changed: timespec

    init(_ path: String, _ info: stat) {
        self.path = path
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        modified = info.st_mtim
        changed = info.st_ctim
    }

    func matches(_ info: stat) -> Bool {
        UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
            && info.st_mtim.tv_sec == modified.tv_sec && info.st_mtim.tv_nsec == modified.tv_nsec
            && info.st_ctim.tv_sec == changed.tv_sec && info.st_ctim.tv_nsec == changed.tv_nsec
    }

    /// `path` (not followed if a symbolic link) is still this directory, unchanged.
    func matches(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && matches(info)
    }
}
