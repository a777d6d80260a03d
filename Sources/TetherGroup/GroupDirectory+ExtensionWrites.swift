#if canImport(Glibc)
import Glibc
#endif

/// How a confined extension may write one place in the group.
package enum GroupWriteAccess: Sendable, Equatable {
    /// Anything beneath it but sockets and devices (its own files).
    case tree
    /// Files directly in it: made, written, replaced and removed; no
    /// directories, links or special files.
    case files
    /// Files that exist already, written in place (lock files, which a
    /// holder opens for writing); nothing made, renamed or removed.
    case existingFiles
}

extension GroupDirectory {
    /// What an extension that may write the group writes (invariant 21):
    /// never the group's top level, so no extension can rename or unlink
    /// `locks/`, a lock file or the host's socket, and a second host or a
    /// second copy of a feature can never be let in by a missing name.
    /// Each place must exist when the sandbox is built
    /// (`prepareForExtensions`).
    package static func extensionWrites(in group: String) -> [(path: String, access: GroupWriteAccess)] {
        [
            ("\(group)/shared", .tree),
            ("\(group)/stores", .files),
            ("\(group)/tallies", .files),
            // Writers of a store hold its lock; a refreshing process holds this one.
            ("\(group)/locks/stores", .existingFiles),
            ("\(group)/locks/refresh.lock", .existingFiles),
        ]
    }

    /// The stores a confined writer may take the lock of.
    static let storesExtensionsWrite = ["defaults", "user-scoped", "credentials"]

    /// Makes every place `extensionWrites` names, and the lock files in
    /// them, while the caller may: the host before it launches anything, an
    /// extension started by hand before it confines itself.
    package func prepareForExtensions() throws(GroupError) {
        for directory in ["shared", "tallies"] { try Self.ensureDirectory("\(path)/\(directory)") }
        // Extensions read features' locks (probes) beside the instance locks
        // kept from them: what is made beside those after their rules is
        // not readable to them, so it is made now.
        for directory in ["locks", "locks/features"] { try Self.ensureDirectory("\(path)/\(directory)") }
        _ = try preparedStorePath("defaults")
        _ = try preparedStorePath("user-scoped")
        for name in Self.storesExtensionsWrite { try createLockFile(try preparedStoreLockPath(name)) }
        try createLockFile(try preparedRefreshLockPath())
    }

    private func createLockFile(_ path: String) throws(GroupError) {
        if let opened = try LockFile.open(path, .watch) { Syscall.close(opened.fd) }
    }
}
