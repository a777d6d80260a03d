#if os(Linux)
import CTetherSystem
import SystemPackage
import Glibc

/// A lock file someone keeps every holder from with a read lock (fcntl
/// F_RDLCK, which Tether never takes: while it stands, no whole-file write
/// lock can be had) is replaced by a fresh inode, already locked. The old
/// one, read lock and all, is unlinked; the path never goes missing.
///
/// The swap is `RENAME_EXCHANGE`, so what it displaced can be looked at:
/// the read-locked file we examined (or an unheld one) is removed; a file
/// another holder locked meanwhile (it replaced the same file first) is
/// swapped back, and that holder keeps it. Each holder also checks, after
/// locking, that the path names its inode (`LivenessLock`,
/// `ExclusiveLock`), so two can never both hold.
enum LockFileReplacement {
    /// The new file at `path`, locked (OFD, exclusive), or nil when another
    /// holder has the path now.
    static func replace(_ path: String, examined: stat) throws(Errno) -> (fd: Int32, info: stat)? {
        // Already replaced by another holder: no swap (and swap back) that
        // would pull its file from under it while it checks the path.
        guard let current = try? Syscall.lstat(path), current.sameFile(as: examined) else { return nil }
        let temporary = try fresh(besides: path)
        let fd = temporary.fd
        guard try OFDLock.tryLockExclusive(fd) else {  // a new inode: no one else knows it
            _ = unlink(temporary.path)
            Syscall.close(fd)
            return nil
        }
        guard tether_renameat2(AT_FDCWD, temporary.path, AT_FDCWD, path, TETHER_RENAME_EXCHANGE) == 0 else {
            let error = Errno(rawValue: errno)
            _ = unlink(temporary.path)
            Syscall.close(fd)
            throw error
        }
        // `temporary.path` now names what was at `path`.
        if let displaced = try? Syscall.lstat(temporary.path), !displaced.sameFile(as: examined),
           heldByAnother(temporary.path) {
            // Another holder's fresh file: its again, and this one goes.
            _ = tether_renameat2(AT_FDCWD, temporary.path, AT_FDCWD, path, TETHER_RENAME_EXCHANGE)
            _ = unlink(temporary.path)
            Syscall.close(fd)
            return nil
        }
        _ = unlink(temporary.path)
        do {
            return (fd, try Syscall.fstat(fd))
        } catch {
            Syscall.close(fd)
            throw error
        }
    }

    /// Whether a process holds an exclusive lock on the file at `path`.
    private static func heldByAnother(_ path: String) -> Bool {
        guard let fd = try? Syscall.open(path, O_RDONLY) else { return false }
        defer { Syscall.close(fd) }
        return (try? OFDLock.conflict(fd))??.exclusive == true
    }

    /// A new, empty file in `path`'s directory, named after it.
    private static func fresh(besides path: String) throws(Errno) -> (fd: Int32, path: String) {
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        let name = path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
        for attempt in 0..<100 {
            let candidate = "\(directory)/.\(name).\(getpid()).\(attempt)"
            let fd = open(candidate, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if fd >= 0 { return (fd, candidate) }
            guard errno == EEXIST else { throw Errno(rawValue: errno) }
        }
        throw .fileExists
    }
}
#endif
