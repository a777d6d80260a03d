import Synchronization
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// A held liveness lock: while this object lives (and the process lives),
/// every probe of `path` reads "running". The kernel drops the lock the
/// instant the process dies, so the answer never goes stale.
///
/// Acquisition, on one close-on-exec descriptor opened without following
/// symlinks:
/// 1. an exclusive OFD lock: the arbiter between Tether holders, and the
///    lock probes query without taking;
/// 2. a *shared* flock(2) lock: what util-linux flock(1) and Darwin
///    O_EXLOCK see. Those take exclusive locks, so they fail against it, and
///    a foreign exclusive holder makes this step fail at once. Shared, because
///    it must never wait: a foreign `flock -s` is compatible with it. A
///    foreign shared flock is therefore not a holder, for probe and hold
///    alike (probe and hold always agree); nor is a foreign fcntl read lock,
///    which would keep step 1 from everyone: the file is replaced
///    (`LockFileReplacement`) and the reader's pid kept in `displacedReader`;
/// 3. a check that `path` still names the locked inode (the file is never
///    unlinked by Tether, but someone else might replace it);
/// 4. the holder's pid, start time and label, written into the file.
///
/// Nothing here waits or spins: a refusal comes within microseconds, so it
/// may run on an event loop.
package final class LivenessLock: @unchecked Sendable {
    package let path: String
    package let holder: HolderInfo
    private let descriptor: Mutex<Int32>

    /// The pid of a foreign read lock that kept the old lock file from
    /// everyone (-1: an OFD lock, whose owner the kernel does not say); the
    /// file was replaced. For the holder to report.
    package let displacedReader: Int32?

    private init(path: String, fd: Int32, holder: HolderInfo, displacedReader: Int32?) {
        self.path = path
        self.holder = holder
        self.descriptor = Mutex(fd)
        self.displacedReader = displacedReader
    }

    deinit { release() }

    /// One non-blocking attempt. Returns nil when another party holds the lock.
    package static func tryAcquire(path: String, label: String) throws(GroupError) -> LivenessLock? {
        // A replaced file is retried; a few dozen times means someone keeps
        // swapping it, which is an error, not contention (eight holders
        // replacing one read-locked file can swap it under each other).
        for _ in 0..<32 {
            guard var opened = try LockFile.open(path, .hold) else { break }
            var fd = opened.fd
            var displacedReader: Int32?
            do {
                #if os(Linux)
                if try !OFDLock.tryLockExclusive(fd) {
                    // Someone's read lock, not a holder: the file is replaced.
                    guard let conflict = try OFDLock.conflict(fd), !conflict.exclusive else {
                        Syscall.close(fd)
                        return nil
                    }
                    Syscall.close(fd)
                    guard let replaced = try LockFileReplacement.replace(path, examined: opened.info) else { return nil }
                    (fd, opened.info) = replaced
                    displacedReader = conflict.pid
                }
                #endif
                guard try takeFlock(fd) else {
                    Syscall.close(fd)  // also drops the OFD lock
                    return nil
                }
                LockFaultInjection.afterLocking(path)
                let current: stat
                do {
                    current = try Syscall.lstat(path)
                } catch .noSuchFileOrDirectory {
                    Syscall.close(fd)
                    continue
                }
                guard current.sameFile(as: opened.info) else {
                    Syscall.close(fd)
                    continue
                }
                let holder = HolderInfo(pid: getpid(), since: HolderInfo.now(), label: label)
                let record = holder.serialized
                try Syscall.pwrite(fd, record, at: 0)
                try Syscall.ftruncate(fd, off_t(record.count))
                return LivenessLock(path: path, fd: fd, holder: holder, displacedReader: displacedReader)
            } catch {
                Syscall.close(fd)
                throw .system("lock", path: path, error)
            }
        }
        throw .system("lock", path: path, .resourceBusy)
    }

    /// Takes the flock(2) half: fails only while a foreign process holds an
    /// exclusive flock (flock(1), O_EXLOCK). Without OFD locks (not Linux)
    /// the flock is the only arbiter between holders, so it is exclusive.
    private static func takeFlock(_ fd: Int32) throws(Errno) -> Bool {
        #if os(Linux)
        try Syscall.flock(fd, LOCK_SH | LOCK_NB)
        #else
        try Syscall.flock(fd, LOCK_EX | LOCK_NB)
        #endif
    }

    /// Releases the lock. Idempotent. The record is cleared first, and both
    /// locks are dropped before the close, so a watcher woken by the close
    /// already sees "not running".
    ///
    /// Not `truncating`, the record is blanked in place instead: its pid
    /// made 0, which names no holder (so a next holder's probe, before it
    /// writes its own, names no one), its block kept. A host releases its
    /// extensions' instance locks so: truncating frees the block (on ext4
    /// with discard, a discard too), a tenth of the host's work when 3,000
    /// extensions stop together.
    package func release(truncating: Bool = true) {
        descriptor.withLock { fd in
            guard fd >= 0 else { return }
            if truncating {
                _ = try? Syscall.ftruncate(fd, 0)
            } else {
                _ = try? Syscall.pwrite(fd, HolderInfo.blank, at: 0)
            }
            _ = try? Syscall.flock(fd, LOCK_UN)
            #if os(Linux)
            OFDLock.unlock(fd)
            #endif
            Syscall.close(fd)
            fd = -1
        }
    }

    /// One sentence for the holder to report when a foreign read lock was
    /// displaced; nil otherwise.
    package var displacementNote: String? {
        displacedReader.map { pid in
            let who = pid > 0 ? "pid \(pid)" : "an open file description"
            return "\(path) was read-locked by \(who), which keeps every holder out; replaced it with a new lock file"
        }
    }
}
