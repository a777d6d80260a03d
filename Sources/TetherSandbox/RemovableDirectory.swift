import SystemPackage
import TetherGroup
#if canImport(Glibc)
import Glibc
#endif

/// A directory met while removing a tree that its extension could still
/// change, opened so that nothing it names is ever followed or changed.
///
/// What was listed is checked first (`fstatat` without following); what is
/// opened must be that very directory (same device and inode), so a
/// symlink or another directory swapped in between is left for the next
/// pass. A directory made unreadable (mode 000) is made 0700 again only
/// through a descriptor of itself (`O_PATH`, checked, then its
/// `/proc/self/fd` link, which names that inode and nothing else): never
/// `fchmodat` by name, which follows a symlink swapped in after the check.
enum RemovableDirectory {
    /// Opens `name` in `parent` for reading, made 0700 if it is ours.
    /// Fails with `.notDirectory` when it is not a directory, or no longer
    /// the one listed; `.noSuchFileOrDirectory` when it is gone.
    static func open(_ name: EntryName, in parent: Int32) -> Result<Int32, Errno> {
        var listed = stat()
        guard fstatat(parent, name.cString, &listed, AT_SYMLINK_NOFOLLOW) == 0 else { return .failure(Errno(rawValue: errno)) }
        guard listed.st_mode & S_IFMT == S_IFDIR else { return .failure(.notDirectory) }
        var child = openat(parent, name.cString, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if child < 0, errno == EACCES {
            // Made unreadable from inside: ours to open again.
            restoreOwnerAccess(name, in: parent, listed: listed)
            child = openat(parent, name.cString, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        }
        guard child >= 0 else { return .failure(errno == ELOOP ? .notDirectory : Errno(rawValue: errno)) }
        var info = stat()
        guard fstat(child, &info) == 0, isSame(info, as: listed) else {
            close(child)
            return .failure(.notDirectory)
        }
        // Made read-only from inside: its entries must go.
        if info.st_uid == geteuid() { _ = fchmod(child, 0o700) }
        return .success(child)
    }

    /// 0700 on the directory `name` names now, if it is the one listed and
    /// ours; nothing else is ever changed.
    private static func restoreOwnerAccess(_ name: EntryName, in parent: Int32, listed: stat) {
        // O_PATH needs no permission on the directory itself.
        let held = openat(parent, name.cString, pathOnly | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard held >= 0 else { return }
        defer { close(held) }
        var info = stat()
        guard fstat(held, &info) == 0, isSame(info, as: listed), info.st_uid == geteuid() else { return }
        // fchmod refuses an O_PATH descriptor; its /proc link reaches the
        // inode held, whatever the name holds by now (glibc's own way for
        // fchmodat's AT_SYMLINK_NOFOLLOW).
        _ = chmod("/proc/self/fd/\(held)", 0o700)
    }

    private static func isSame(_ info: stat, as listed: stat) -> Bool {
        info.st_mode & S_IFMT == S_IFDIR && info.st_dev == listed.st_dev && info.st_ino == listed.st_ino
    }

    /// O_PATH (GNU, so not in Glibc's module): x86-64 and arm64 alike.
    static let pathOnly: Int32 = 0o10_000_000
}
