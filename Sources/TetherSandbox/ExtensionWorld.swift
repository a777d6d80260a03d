import SystemPackage
import TetherGroup
import TetherLoop
#if canImport(Glibc)
import Glibc
#endif

/// An extension's own world (invariant 26), bubblewrap's model made in the
/// spawn itself: user, mount, PID, IPC and cgroup namespaces, an empty
/// network namespace for a role without network (abstract sockets are the
/// namespace's too), and a root that holds only a read-only view of what
/// programs need, its executable's directories (and a script's its
/// arguments name), `/dev`'s harmless devices,
/// its own `/proc`, a private `/tmp` (a tmpfs of `diskLimitMiB`: the kernel
/// counts unlinked and `O_TMPFILE` files and symlinks there), and the group
/// (writable or read-only by role) without its instance locks. Nothing else
/// of `/home`, `/var`, `/run` or `/tmp`. Landlock and seccomp stay on top.
package enum ExtensionWorld {
    /// Entries (inodes) a TMPDIR may hold for a disk limit: empty files
    /// cost the kernel memory no size counts, and the host's count a stat
    /// each where no world's tmpfs counts them.
    package static func entries(forDiskLimitMiB diskLimitMiB: Int) -> Int {
        max(1024, min(max(diskLimitMiB, 0), 1 << 20) * 64)
    }

    /// Its `TMPDIR` and the directory it starts in: `/tmp`, unless what
    /// the world shows lies beneath it (a group in /tmp): a grant to write
    /// a directory covers every bind beneath it too.
    static let temporaryCandidates = ["/tmp", "/var/tmp", "/run/tmp"]

    /// The system's programs and libraries, read-only (a symbolic link
    /// where the machine has one: merged /usr).
    static let system = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt"]
    /// What a resolver, TLS, the dynamic loader, time zones and a Python
    /// read in /etc.
    package static let configuration = [
        "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/timezone",
        "/etc/resolv.conf", "/etc/hosts", "/etc/host.conf", "/etc/nsswitch.conf", "/etc/gai.conf",
        "/etc/services", "/etc/protocols", "/etc/passwd", "/etc/group", "/etc/ssl", "/etc/ca-certificates",
        "/etc/pki", "/etc/alternatives", "/etc/os-release", "/etc/mime.types", "/etc/locale.alias",
        "/etc/python3", "/etc/python3.11", "/etc/python3.12", "/etc/python3.13",
    ]
    static let devices = ["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"]

    /// The steps of `executable`'s world under `policy`; `bundle`, the
    /// directory of its manifest (the scripts and data beside it), is read-only there;
    /// its /etc `configuration`'s copies (nil: each file bound).
    /// Nil where no world could show it without what it must not see: its
    /// executable's directory is a kept place, or each place for its TMPDIR
    /// would cover what it shows. Beneath the user's `home`, only the
    /// extension's own directories are shown, and of what its bytes name, the
    /// files it loads (`ExecutableDependencies.loadedFiles`): a RUNPATH or a
    /// script argument naming `~/.ssh` shows nothing of it.
    package static func steps(policy: SandboxPolicy, executable: String, arguments: [String] = [], bundle: String?,
                              diskLimitMiB: Int, configuration: WorldConfiguration? = nil,
                              home: String? = ProcessEnvironment.value("HOME"))
        -> (steps: [SpawnWorld.Step], temporaryDirectory: String)? {
        var steps: [SpawnWorld.Step] = []
        for path in system {
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            if info.st_mode & S_IFMT == S_IFLNK, let text = Self.linkText(path) {
                steps.append(.symlink(at: path, text: text))
            } else {
                steps.append(.read(path, at: path, optional: true))
            }
        }
        // /etc's steps go here, once the program's directories are known.
        let configurationAt = steps.count
        // /dev is a directory of the read-only root, not a file system of its own.
        steps += devices.map { .device($0) }
        for (index, name) in ["stdin", "stdout", "stderr"].enumerated() {
            steps.append(.symlink(at: "/dev/\(name)", text: "/proc/self/fd/\(index)"))
        }
        steps.append(.symlink(at: "/dev/fd", text: "/proc/self/fd"))
        steps.append(.proc(at: "/proc"))
        // Its own directories and the group's, parents before what lies
        // beneath them (a bind inside another lands on top of it).
        var binds: [(path: String, writable: Bool, optional: Bool)] = []
        // Where a program's path goes through a symlink (`.build/release`),
        // its directory is bound at that path too: it is exec'd by it.
        var aliases: [(source: String, target: String)] = []
        var programs = [ExecutableDependencies.directory(of: executable)]
        if let resolved = Self.resolved(executable) { programs.append(ExecutableDependencies.directory(of: resolved)) }
        if let bundle { programs.append(bundle) }
        // What the program's own bytes name (its RUNPATH, its interpreter)
        // and its arguments' scripts (`/usr/bin/env python3 /x/y.py`):
        // vetted like the rest, as the program may be hostile; beneath the
        // user's home, no directory of theirs, only the files it loads.
        // The home `HOME` names and the account's: either may be unset or other.
        let homes = Set([home, Self.accountHome()].compactMap { $0 }.filter { $0.hasPrefix("/") }.map { Self.resolved($0) ?? $0 })
            .filter { $0 != "/" }.sorted()
        let kept = Self.kept(policy, homes: homes)
        // Its own directories: those a world may show (a bundle that is the
        // home itself is no directory of its own).
        let ownDirectories = programs.compactMap(Self.resolved).filter { covered($0, by: system) || Self.mayShow($0, keeping: kept) }
        func isTheUsers(_ path: String) -> Bool {
            guard let source = Self.resolved(path) else { return false }
            return covered(source, by: homes) && !covered(source, by: ownDirectories)
        }
        // Where extensions write (the groups, their TMPDIRs): what lies there
        // may be a symlink by the time the world is made, so nothing the
        // program names is shown from there.
        let writable = ([ExecutableDependencies.directory(of: policy.group)] + policy.hiddenTemporaryRoots).map { Self.resolved($0) ?? $0 }
        func isWritable(_ path: String) -> Bool { Self.resolved(path).map { covered($0, by: writable) } ?? true }
        var named = ExecutableDependencies.directories(of: executable)
        for argument in arguments where argument.hasPrefix("/") {
            var info = stat()
            if stat(argument, &info) == 0, info.st_mode & S_IFMT == S_IFREG {
                named.append(ExecutableDependencies.directory(of: argument))
            }
        }
        programs += named.filter { !isTheUsers($0) && !isWritable($0) }
        let loaded = named.contains(where: isTheUsers)
            ? ExecutableDependencies.loadedFiles(of: executable).filter { isTheUsers($0) && !isWritable($0) } : []
        steps.insert(contentsOf: etc(configuration, showing: programs), at: configurationAt)
        // Its own directory it must see, or it has no world.
        guard let own = Self.resolved(programs[0]), covered(own, by: system) || Self.mayShow(own, keeping: kept) else {
            return nil
        }
        for directory in programs {
            guard let source = Self.resolved(directory), !covered(source, by: system),
                  Self.mayShow(source, keeping: kept) else { continue }
            binds.append((source, false, true))
            let lexical = FilePath(directory).lexicallyNormalized().string
            // A '..' after a symlink is not what the kernel would resolve: no alias then.
            if lexical != source, lexical.hasPrefix("/"), !directory.split(separator: "/").contains(".."),
               !covered(lexical, by: system), Self.mayShow(lexical, keeping: kept) {
                aliases.append((source, lexical))
            }
        }
        for file in loaded {
            guard let source = Self.resolved(file), !covered(source, by: system), Self.mayShow(source, keeping: kept) else { continue }
            binds.append((source, false, true))
            let lexical = FilePath(file).lexicallyNormalized().string
            if lexical != source, lexical.hasPrefix("/"), !file.split(separator: "/").contains(".."),
               Self.mayShow(lexical, keeping: kept) {
                aliases.append((source, lexical))
            }
        }
        binds.append((policy.group, policy.groupWritable, false))
        if policy.groupWritable, let secrets = policy.secrets { binds.append((secrets, true, true)) }
        let targets = binds.map(\.path) + aliases.map(\.target)
        guard let temporary = temporaryCandidates.first(where: { candidate in
            !targets.contains { covered($0, by: [candidate]) || covered(candidate, by: [$0]) }
        }) else { return nil }
        let inodes = Self.entries(forDiskLimitMiB: diskLimitMiB)
        steps.append(.tmpfs(at: temporary, options: "size=\(max(diskLimitMiB, 1))m,nr_inodes=\(inodes),mode=0700"))
        // Binds and aliases together, parents first: one beneath another lands on top of it.
        let mounts = binds.map { (source: $0.path, target: $0.path, writable: $0.writable, optional: $0.optional) }
            + aliases.map { (source: $0.source, target: $0.target, writable: false, optional: true) }
        var seen: Set<String> = []
        for mount in mounts.sorted(by: { depth($0.target) < depth($1.target) }) where seen.insert(mount.target).inserted {
            steps.append(mount.writable ? .write(mount.source, at: mount.target, optional: mount.optional)
                                        : .read(mount.source, at: mount.target, optional: mount.optional))
        }
        // Instance locks are the host's alone: a sibling that could lock
        // one would keep its extension from ever launching.
        steps.append(.mask(at: GroupDirectory.extensionLocksPath(of: policy.group)))
        return (steps, temporary)
    }

    /// What a world shows at /etc: the copies in one read-only bind, the
    /// configuration directories bound beneath it; or, without copies or
    /// where a program, bundle or script lies beneath /etc (it is bound
    /// there, and the copies' bind is read-only), each entry bound.
    private static func etc(_ configuration: WorldConfiguration?, showing programs: [String]) -> [SpawnWorld.Step] {
        if let configuration, !programs.contains(where: { covered($0, by: ["/etc"]) }) {
            return [.read(configuration.directory, at: "/etc", optional: false)]
                + configuration.directoryBinds().map { .read($0.source, at: $0.target, optional: true) }
        }
        // Resolved here: an absolute link (/etc/localtime, a managed
        // resolv.conf) would resolve against the root being built.
        return Self.configuration.compactMap { path in Self.resolved(path).map { .read($0, at: path, optional: true) } }
    }

    /// A world for `executable` (where `unavailable` is nil), or nil where
    /// no directory is left for its TMPDIR.
    package static func make(policy: SandboxPolicy, executable: String, arguments: [String], bundle: String?,
                             diskLimitMiB: Int, configuration: WorldConfiguration? = nil,
                             support: KernelSupport = .current) throws(Errno) -> SpawnWorld? {
        guard let made = steps(policy: policy, executable: executable, arguments: arguments, bundle: bundle,
                               diskLimitMiB: diskLimitMiB, configuration: configuration)
        else { return nil }
        return try SpawnWorld(steps: made.steps, ownNetwork: !policy.network, temporaryDirectory: made.temporaryDirectory,
                              staging: staging, landlockABI: support.landlockABI)
    }

    /// Why extensions cannot have worlds of their own here (user
    /// namespaces refused by a sysctl, an AppArmor policy, an outer
    /// seccomp filter, a kernel without them), or nil: probed once.
    package static let unavailable: String? = {
        let probe: SpawnWorld
        do throws(Errno) {
            // A bind and a mask too: each kind of mount a launch's world makes.
            probe = try SpawnWorld(steps: [.proc(at: "/proc"), .tmpfs(at: "/tmp", options: "size=4k"),
                                           .device("/dev/null"), .mask(at: "/tmp")],
                                   ownNetwork: true, temporaryDirectory: "/tmp", staging: staging, landlockABI: nil)
        } catch {
            return "\(error)"
        }
        guard let failure = probe.probe() else { return nil }
        return "\(failure.step): \(failure.error)"
    }()

    /// An existing directory to build the root on: a tmpfs hides it in the
    /// child's namespace only, and what lies beneath stays a source (each
    /// source is opened before it is covered).
    static let staging = "/tmp"

    /// Places no bind may show, nor any directory above them: the secrets a
    /// role may not read, every extension's host-side TMPDIR, the user's
    /// home as a whole, the group's parent (other groups, their secrets).
    static func kept(_ policy: SandboxPolicy, homes: [String]) -> [String] {
        var kept = policy.hiddenTemporaryRoots + policy.otherSecrets + homes
        if !policy.groupWritable, let secrets = policy.secrets { kept.append(secrets) }
        kept.append(ExecutableDependencies.directory(of: policy.group))
        return kept.compactMap { resolved($0) ?? $0 }
    }

    /// Whether a program directory may be bound: never the machine's top
    /// directories or what holds the user's data or a kept place.
    static func mayShow(_ path: String, keeping kept: [String]) -> Bool {
        let refused = ["/", "/home", "/root", "/run", "/proc", "/sys", "/dev", "/tmp", "/var", "/etc", "/mnt", "/media", "/srv"]
        if refused.contains(path) || covered(path, by: ["/proc", "/sys", "/dev", "/run"]) { return false }
        return !kept.contains { $0 == path || $0.hasPrefix(path == "/" ? "/" : path + "/") }
    }

    /// The account's home directory (the password database's), whatever
    /// `HOME` says.
    static func accountHome() -> String? {
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4_096)
        guard getpwuid_r(getuid(), &entry, &buffer, buffer.count, &found) == 0, found != nil, let directory = entry.pw_dir
        else { return nil }
        return String(cString: directory)
    }

    /// `path` with every link and `..` resolved, or nil if it is not there.
    static func resolved(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private static func covered(_ path: String, by roots: [String]) -> Bool {
        roots.contains { path == $0 || path.hasPrefix($0 + "/") }
    }

    private static func depth(_ path: String) -> Int { path.split(separator: "/").count }

    private static func linkText(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
