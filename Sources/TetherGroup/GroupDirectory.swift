import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The group directory: the App Group container every Tether process of one
/// user shares. Created 0700 on first use; refused when it is a symlink, is
/// owned by another user, or is writable by group or others.
///
/// Layout:
/// ```
/// DIR/locks/host.lock              the host's liveness lock
/// DIR/locks/features/NAME.lock     one liveness lock per feature
/// DIR/locks/extensions/NAME.lock   held while an instance of extension NAME runs
/// DIR/locks/stores/NAME.lock       serializes writers of store NAME
/// DIR/locks/refresh.lock           held while a process refreshes tokens
/// DIR/stores/defaults.json         the defaults store (0600)
/// DIR/stores/user-scoped.json      what belongs to the logged-in user
/// DIR/shared/NAME                  extensions' shared files (the SDK's `SharedContainer`)
/// DIR/host.sock                    the host's JSON-RPC socket (0600)
/// DIR/tallies/NAME                 append-only counts
/// PARENT/.NAME.secrets/credentials.json  the credential store (0700 directory, 0600 file)
/// ```
/// Lock files are created once and never unlinked. Secrets live beside the
/// group, not in it, so a sandbox can grant parts of the group (files in
/// it are replaced, new inodes, on every write) and leave them out. A
/// confined extension may never write the group's top level, so no
/// extension renames or unlinks `locks/` or the socket.
public struct GroupDirectory: Sendable {
    /// The group's absolute path.
    public let path: String

    /// `--group DIR`, else `$TETHER_GROUP`, else
    /// `${XDG_STATE_HOME:-~/.local/state}/tether/default`.
    public static func resolvePath(explicit: String?, environment: [String: String]) throws(GroupError) -> String {
        try resolvePath(explicit: explicit) { environment[$0] }
    }

    /// The same, reading variables one at a time (`ProcessEnvironment.value`
    /// on start-up paths, which then build no dictionary).
    package static func resolvePath(explicit: String?, variable: (String) -> String?) throws(GroupError) -> String {
        if let explicit, !explicit.isEmpty { return try resolved(explicit) }
        if let group = variable("TETHER_GROUP"), !group.isEmpty { return try resolved(group) }
        let stateHome: String
        // The XDG spec says a relative XDG_STATE_HOME is invalid and must be ignored.
        if let xdg = variable("XDG_STATE_HOME"), xdg.hasPrefix("/") {
            stateHome = xdg
        } else if let home = variable("HOME"), home.hasPrefix("/") {
            stateHome = home + "/.local/state"
        } else {
            throw .noGroupDirectory
        }
        return stateHome + "/tether/default"
    }

    /// Opens the group directory at `path`, creating it (and missing parents,
    /// 0700) when `create` is set, then checks that it is safe to use.
    public init(path: String, create: Bool = true) throws(GroupError) {
        let path = try Self.resolved(path)
        self.path = path
        // The common case, an existing directory, costs one lstat.
        if create, (try? Syscall.lstat(path)) == nil { try Self.makeDirectories(path) }
        try Self.validate(path)
    }

    /// `path` made absolute, or why it cannot be (for what is created or
    /// handed on from it).
    package static func resolved(_ path: String) throws(GroupError) -> String {
        do throws(Errno) {
            return try absolutePath(resolving: path)
        } catch {
            throw .system("read the working directory for", path: path, error)
        }
    }

    /// The host's mark that the group's shared parts (`shared/`,
    /// `stores/`) hold more than it allows: writers that would add refuse.
    package static func fullMarkerPath(of group: String) -> String { "\(group)/locks/group-full" }

    static func group(ofFullMarker marker: String) -> String { String(marker.dropLast("/locks/group-full".count)) }

    /// The host's mark that the group is full, made or removed. Whatever
    /// is planted at `marker` (a FIFO, say) is never waited on.
    package static func setFullMark(_ full: Bool, at marker: String) {
        guard full else { return _ = unlink(marker) }
        if let fd = try? Syscall.open(marker, O_WRONLY | O_CREAT) { Syscall.close(fd) }
    }

    /// Whether the host's mark refuses writing `count` bytes over `path`:
    /// while the group is full, only what shrinks a file is written.
    package static func fullRefuses(_ count: Int, over path: String, marker: String) -> Bool {
        guard (try? Syscall.lstat(marker)) != nil else { return false }
        return count > Int((try? Syscall.lstat(path))?.st_size ?? 0)
    }

    /// Where instance locks live: the host's alone (no extension sees it).
    package static func extensionLocksPath(of group: String) -> String { "\(group)/locks/extensions" }
    /// Where features' liveness locks live.
    package static func featureLocksPath(of group: String) -> String { "\(group)/locks/features" }

    /// Where the liveness lock of `target` is (it may not exist yet: a
    /// lock never taken reads as not running).
    public func lockPath(for target: LockTarget) -> String {
        switch target {
        case .host: "\(path)/locks/host.lock"
        case .feature(let name): "\(Self.featureLocksPath(of: path))/\(name.rawValue).lock"
        case .extensionInstance(let name): "\(Self.extensionLocksPath(of: path))/\(name.rawValue).lock"
        }
    }

    /// The lock file's path for `target`, with its directories created and
    /// checked the same way as the group directory itself.
    package func preparedLockPath(for target: LockTarget) throws(GroupError) -> String {
        try Self.ensureDirectory("\(path)/locks")
        switch target {
        case .host: break
        case .feature: try Self.ensureDirectory(Self.featureLocksPath(of: path))
        case .extensionInstance: try Self.ensureDirectory(Self.extensionLocksPath(of: path))
        }
        return lockPath(for: target)
    }

    /// The lock's path, its file created (empty, 0600) if missing: for a
    /// process about to lose the right to create files in the group (a
    /// confined read-only keyboard still watches the host's lock).
    package func createdLockPath(for target: LockTarget) throws(GroupError) -> String {
        let path = try preparedLockPath(for: target)
        if let opened = try LockFile.open(path, .watch) { Syscall.close(opened.fd) }
        return path
    }

    /// The store file named `name` (`defaults`, `user-scoped`).
    package func storePath(_ name: String) -> String { "\(path)/stores/\(name).json" }

    /// The store file named `name`, its directory made; while it does not
    /// exist, a store an earlier version kept at the group's top level is
    /// moved in, and its crashed writers' leftovers removed.
    package func preparedStorePath(_ name: String) throws(GroupError) -> String {
        let store = storePath(name)
        // The common case, moved already, costs one lstat.
        if (try? Syscall.lstat(store)) != nil { return store }
        try Self.ensureDirectory("\(path)/stores")
        let old = "\(path)/\(name).json"
        try Self.moveNewer(old, to: store)
        AtomicFile.removeTemporaryFiles(of: old, .deadWriters)
        return store
    }

    /// The lock that serializes writers of store `name`, directories created.
    package func preparedStoreLockPath(_ name: String) throws(GroupError) -> String {
        try Self.ensureDirectory("\(path)/locks")
        try Self.ensureDirectory("\(path)/locks/stores")
        return "\(path)/locks/stores/\(name).lock"
    }

    /// The lock a process holds while it refreshes tokens, directories created.
    package func preparedRefreshLockPath() throws(GroupError) -> String {
        try Self.ensureDirectory("\(path)/locks")
        return "\(path)/locks/refresh.lock"
    }

    /// The host's JSON-RPC socket.
    public var socketPath: String { "\(path)/host.sock" }

    static func validate(_ path: String) throws(GroupError) {
        let info: stat
        do { info = try Syscall.lstat(path) } catch { throw .system("open the group directory", path: path, error) }
        if info.isSymlink { throw .symlinkRefused(path) }
        guard info.isDirectory else { throw .notADirectory(path) }
        guard info.st_uid == currentUID() else { throw .foreignOwner(path, uid: info.st_uid) }
        guard info.st_mode & 0o022 == 0 else { throw .insecurePermissions(path, mode: UInt32(info.st_mode)) }
    }

    static func ensureDirectory(_ path: String) throws(GroupError) {
        do {
            try Syscall.mkdir(path, mode: 0o700)
        } catch .fileExists {
            // Checked below like any existing directory.
        } catch {
            throw .system("create directory", path: path, error)
        }
        try validate(path)
    }

    /// `mkdir -p` with mode 0700 for every directory it creates. Existing
    /// parents are left as they are; only the group directory is checked.
    static func makeDirectories(_ path: String) throws(GroupError) {
        // Each prefix is taken from `/`: a relative path would be made there.
        guard path.hasPrefix("/") else { throw .system("create directory", path: path, .invalidArgument) }
        var prefix = ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += "/" + component
            do {
                try Syscall.mkdir(prefix, mode: 0o700)
            } catch .fileExists {
                continue
            } catch {
                throw .system("create directory", path: prefix, error)
            }
        }
    }
}

func currentUID() -> UInt32 { geteuid() }

/// `path` made absolute against the working directory, without trailing '/'.
/// A relative path whose working directory cannot be read (removed, longer
/// than PATH_MAX, not UTF-8) is left relative: for names shown, not for
/// what is created (`absolutePath(resolving:)`).
package func absolutePath(_ path: String) -> String {
    (try? absolutePath(resolving: path)) ?? withoutTrailingSlashes(path)
}

/// `path` made absolute against the working directory, or the reason it
/// cannot be: never a relative path taken from `/` (it made `/NAME`).
package func absolutePath(resolving path: String) throws(Errno) -> String {
    guard !path.hasPrefix("/") else { return withoutTrailingSlashes(path) }
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    guard getcwd(&buffer, buffer.count) != nil else { throw Errno(rawValue: errno) }
    // Not UTF-8: decoding would name another directory (U+FFFD for each byte).
    let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    guard let cwd = String(validating: bytes, as: UTF8.self) else { throw .illegalByteSequence }
    return withoutTrailingSlashes((cwd == "/" ? "" : cwd) + "/" + path)
}

private func withoutTrailingSlashes(_ path: String) -> String {
    var result = path
    while result.count > 1 && result.hasSuffix("/") { result.removeLast() }
    return result
}
