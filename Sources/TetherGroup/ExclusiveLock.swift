#if os(Linux)
import SystemPackage
import Glibc

/// A cross-process mutex: an OFD lock on a file that is created once and
/// never unlinked. The kernel drops it when the holder dies, so a crash
/// never leaves it stuck and nobody guesses at staleness. Used to serialize
/// store writers and token refreshes; liveness uses `LivenessLock` instead.
public final class ExclusiveLock: @unchecked Sendable {
    public let path: String
    private var fd: Int32

    private init(path: String, fd: Int32) {
        self.path = path
        self.fd = fd
    }

    deinit { release() }

    /// Blocks until the lock is ours. A holder that dies releases it at once.
    public static func acquire(path: String) throws(GroupError) -> ExclusiveLock {
        guard let lock = try take(path: path, wait: true) else {
            throw .system("lock", path: path, .resourceTemporarilyUnavailable)  // not reached: a wait ends holding it
        }
        return lock
    }

    /// The lock, or nil when another process holds it.
    public static func tryAcquire(path: String) throws(GroupError) -> ExclusiveLock? {
        try take(path: path, wait: false)
    }

    private static func take(path: String, wait: Bool) throws(GroupError) -> ExclusiveLock? {
        // A lock file is never unlinked, but it may be replaced by hand; the
        // loop ends when the locked inode is the one the path names.
        while true {
            guard let (fd, info) = try LockFile.open(path, .hold) else { return nil }
            do {
                if wait {
                    try OFDLock.lockExclusive(fd)
                } else if try !OFDLock.tryLockExclusive(fd) {
                    Syscall.close(fd)
                    return nil
                }
            } catch {
                Syscall.close(fd)
                throw .system("lock", path: path, error)
            }
            if let current = try? Syscall.lstat(path), current.sameFile(as: info) {
                return ExclusiveLock(path: path, fd: fd)
            }
            Syscall.close(fd)
        }
    }

    /// Releases the lock; also done when the value is deallocated.
    public func release() {
        guard fd >= 0 else { return }
        OFDLock.unlock(fd)
        Syscall.close(fd)
        fd = -1
    }
}
#endif
