import CTetherSystem
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// The group's secrets (the credential store) live beside the group, in
/// `PARENT/.NAME.secrets/` (0700), not in it: a sandbox can then grant the
/// group whole (its files are replaced, new inodes, on every write) and
/// leave the secrets out of a read-only role's reach.
extension GroupDirectory {
    /// The directory of the group's secrets: `PARENT/.NAME.secrets`.
    package var secretsPath: String { Self.secretsPath(of: path) }

    /// The same for the group at `path` (absolute; `.`, `..` and repeated
    /// slashes are resolved first, so every spelling finds the same one).
    package static func secretsPath(of path: String) -> String {
        var components: [Substring] = []
        for component in path.split(separator: "/") where component != "." {
            if component == ".." { _ = components.popLast() } else { components.append(component) }
        }
        let name = components.popLast().map(String.init) ?? "tether"
        return components.map { "/" + $0 }.joined() + "/.\(name).secrets"
    }

    /// The directory that holds the credential store, made (0700) and
    /// checked like the group: `secretsPath`, or the group itself where the
    /// group's parent is not ours to write (a read-only role can then read
    /// them: `Confinement` says so). A store an earlier version kept in the
    /// group is moved in (the newer copy kept), with its writers' leftovers.
    package func preparedSecretsPath() throws(GroupError) -> String {
        let secrets = secretsPath
        do throws(GroupError) {
            try Self.ensureDirectory(secrets)
        } catch .system(_, _, let error) where [.permissionDenied, .notPermitted, .readOnlyFileSystem].contains(error) {
            return path
        }
        // So that hosts of any group hide it from read-only keyboards.
        SecretsIndex.register(secrets)
        let old = "\(path)/credentials.json"
        try Self.moveNewer(old, to: secrets + "/credentials.json")
        // An earlier version's crashed writers left copies beside the old store.
        AtomicFile.removeTemporaryFiles(of: old, .deadWriters)
        return secrets
    }

    /// `from` becomes `to` unless `to` is newer, in which case `from` goes.
    static func moveNewer(_ from: String, to: String) throws(GroupError) {
        var moved = tether_renameat2(AT_FDCWD, from, AT_FDCWD, to, TETHER_RENAME_NOREPLACE) == 0
        // File systems without RENAME_NOREPLACE: a link fails the same way.
        if !moved, errno == EINVAL || errno == ENOSYS {
            moved = link(from, to) == 0
            if moved { _ = unlink(from) }
        }
        if moved { return }
        switch Errno(rawValue: errno) {
        // In an extension's world the group and its secrets are two mounts
        // (the kernel says so before it looks for `from`): the host, which
        // sees one file system, moved it before any launch.
        case .noSuchFileOrDirectory, .improperLink: return
        case .fileExists:
            var old = stat(), new = stat()
            guard lstat(from, &old) == 0, lstat(to, &new) == 0 else { return }
            let newer = (old.st_mtim.tv_sec, old.st_mtim.tv_nsec) > (new.st_mtim.tv_sec, new.st_mtim.tv_nsec)
            if newer ? rename(from, to) != 0 : unlink(from) != 0, errno != ENOENT {
                throw .system("move a store to", path: to, Errno(rawValue: errno))
            }
        case let error:
            throw .system("move a store to", path: to, error)
        }
    }
}
