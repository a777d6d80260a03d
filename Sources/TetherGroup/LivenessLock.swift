import Synchronization
import SystemPackage
import TetherLoop
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
/// 2. an exclusive flock(2) lock: what util-linux flock(1) and Darwin
///    O_EXLOCK see, so those tools and Tether exclude each other;
/// 3. a check that `path` still names the locked inode (the file is never
///    unlinked by Tether, but someone else might replace it);
/// 4. the holder's pid, start time and label, written into the file.
public final class LivenessLock: @unchecked Sendable {
    public let path: String
    public let holder: HolderInfo
    private let descriptor: Mutex<Int32>

    private init(path: String, fd: Int32, holder: HolderInfo) {
        self.path = path
        self.holder = holder
        self.descriptor = Mutex(fd)
    }

    deinit { release() }

    /// One non-blocking attempt. Returns nil when another party holds the lock.
    public static func tryAcquire(path: String, label: String) throws(GroupError) -> LivenessLock? {
        // A replaced file is retried a few times; more means someone keeps
        // swapping it, which is an error, not contention.
        for _ in 0..<8 {
            guard let opened = try LockFile.open(path, .hold) else { break }
            let fd = opened.fd
            do {
                #if os(Linux)
                guard try OFDLock.tryLockExclusive(fd) else {
                    Syscall.close(fd)
                    return nil
                }
                #endif
                guard try takeFlock(fd, file: opened.info) else {
                    Syscall.close(fd)  // also drops the OFD lock
                    return nil
                }
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
                return LivenessLock(path: path, fd: fd, holder: holder)
            } catch {
                Syscall.close(fd)
                throw .system("lock", path: path, error)
            }
        }
        throw .system("lock", path: path, .resourceBusy)
    }

    /// Takes the flock(2) half. It can only be busy for two reasons: a probe
    /// holding a shared lock for a few instructions (wait it out: that probe
    /// started before our OFD lock, and later probes will see the OFD lock and
    /// stay away), or a foreign exclusive holder such as flock(1) (give up).
    private static func takeFlock(_ fd: Int32, file: stat) throws(Errno) -> Bool {
        // Generous: on an overloaded machine a probe preempted inside its
        // flock/close pair may wait a long time for a CPU.
        let deadline = MonotonicClock.nanoseconds() + 5_000_000_000
        var attempts = 0
        while true {
            if try Syscall.flock(fd, LOCK_EX | LOCK_NB) { return true }
            #if os(Linux)
            if attempts % 64 == 0,
               FlockTable.exclusiveHolder(device: file.st_dev, inode: file.st_ino) != nil {
                return false
            }
            #endif
            attempts += 1
            if MonotonicClock.nanoseconds() > deadline { return false }
            // Bounded wait for a probe that was preempted inside its
            // flock/close pair. Yielding first; then really giving up the
            // CPU (sched_yield may put us straight back), so a probe that
            // waits for one runs and lets go. Backoff, not synchronization.
            if attempts < 64 {
                sched_yield()
            } else {
                usleep(UInt32(min(1_000, 10 * (attempts - 63))))
            }
        }
    }

    /// Releases the lock. Idempotent. The record is cleared first, and both
    /// locks are dropped before the close, so a watcher woken by the close
    /// already sees "not running".
    public func release() {
        descriptor.withLock { fd in
            guard fd >= 0 else { return }
            _ = try? Syscall.ftruncate(fd, 0)
            _ = try? Syscall.flock(fd, LOCK_UN)
            #if os(Linux)
            OFDLock.unlock(fd)
            #endif
            Syscall.close(fd)
            fd = -1
        }
    }

    public var isHeld: Bool { descriptor.withLock { $0 >= 0 } }
}
