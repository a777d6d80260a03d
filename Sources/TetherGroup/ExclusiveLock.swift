#if os(Linux)
import SystemPackage
import Glibc
import TetherLoop

/// A cross-process mutex: an OFD lock on a file that is created once and
/// never unlinked. The kernel drops it when the holder dies, so a crash
/// never leaves it stuck and nobody guesses at staleness. Used to serialize
/// store writers and token refreshes; liveness uses `LivenessLock` instead.
///
/// Every wait has a deadline: a holder that is stopped (SIGSTOP, a debugger)
/// or hung holds the lock as long as it lives, and a waiter must be able to
/// say so rather than block forever.
package final class ExclusiveLock: @unchecked Sendable {
    package let path: String
    private var fd: Int32

    /// How long a store writer waits for another: writes take milliseconds.
    package static let defaultTimeoutMilliseconds = 10_000

    private init(path: String, fd: Int32) {
        self.path = path
        self.fd = fd
    }

    deinit { release() }

    /// Waits until the lock is ours, at most `timeoutMilliseconds`; then
    /// throws `GroupError.lockTimeout`. A holder that dies releases it at
    /// once. The wait is event-driven (inotify on the lock file: a holder
    /// lets go by closing it), on the calling thread.
    package static func acquire(path: String,
                                timeoutMilliseconds: Int = ExclusiveLock.defaultTimeoutMilliseconds) throws(GroupError) -> ExclusiveLock {
        let started = MonotonicClock.nanoseconds()
        // At most a day: no overflow, and no wait that long is meant.
        let deadline = started + UInt64(min(max(0, timeoutMilliseconds), 86_400_000)) * 1_000_000
        guard let lock = try take(path: path, deadline: deadline) else {
            throw .lockTimeout(path, seconds: Int((MonotonicClock.nanoseconds() - started) / 1_000_000_000))
        }
        return lock
    }

    /// The lock, or nil when another process holds it.
    package static func tryAcquire(path: String) throws(GroupError) -> ExclusiveLock? {
        try take(path: path, deadline: 0)
    }

    /// The lock, or nil at `deadline`. A lock file is never unlinked, but it
    /// may be replaced by hand: the loop ends when the locked inode is the
    /// one the path names.
    private static func take(path: String, deadline: UInt64) throws(GroupError) -> ExclusiveLock? {
        for _ in 0..<64 {
            guard var (fd, info) = try LockFile.open(path, .hold) else { return nil }
            let outcome: Outcome
            do {
                outcome = try wait(fd: fd, path: path, deadline: deadline)
            } catch {
                Syscall.close(fd)
                throw .system("lock", path: path, error)
            }
            switch outcome {
            case .locked:
                break
            case .timedOut:
                Syscall.close(fd)
                return nil
            case .readLocked:
                // Someone's read lock, which no holder takes: a fresh file.
                Syscall.close(fd)
                let replaced: (fd: Int32, info: stat)?
                do { replaced = try LockFileReplacement.replace(path, examined: info) } catch {
                    throw .system("lock", path: path, error)
                }
                guard let replaced else { continue }  // another took it: wait for that one
                (fd, info) = replaced
            }
            LockFaultInjection.afterLocking(path)
            if let current = try? Syscall.lstat(path), current.sameFile(as: info) {
                return ExclusiveLock(path: path, fd: fd)
            }
            Syscall.close(fd)
        }
        throw .system("lock", path: path, .resourceBusy)
    }

    /// How a wait for the lock ended.
    enum Outcome {
        case locked
        case timedOut
        /// Kept by a read lock alone: no holder to wait for.
        case readLocked
    }

    /// Takes the OFD lock on `fd`, waiting for the holder's close until
    /// `deadline`; `.readLocked` at once when only a read lock keeps it. The
    /// descriptor stays open all along, so our own tries raise no events.
    /// After an event that did not free the lock it looks again on
    /// `LockRecheck`'s schedule.
    private static func wait(fd: Int32, path: String, deadline: UInt64) throws(Errno) -> Outcome {
        func attempt() throws(Errno) -> Outcome? {
            if try OFDLock.tryLockExclusive(fd) { return .locked }
            return try OFDLock.conflict(fd)?.exclusive == false ? .readLocked : nil
        }
        if let outcome = try attempt() { return outcome }
        guard MonotonicClock.nanoseconds() < deadline else { return .timedOut }
        // Without an inotify instance (the per-user limit, 128 by default, is
        // easy to reach in a storm of waiters), the same schedule runs on
        // timeouts alone, capped at its longest wait: slower to notice, still bounded.
        let notify = inotify_init1(Int32(IN_CLOEXEC) | Int32(IN_NONBLOCK))
        defer { if notify >= 0 { Glibc.close(notify) } }
        let mask = UInt32(IN_CLOSE_WRITE | IN_CLOSE_NOWRITE | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF) | UInt32(IN_DONT_FOLLOW)
        let watching = notify >= 0 && inotify_add_watch(notify, path, mask) >= 0
        var recheck = LockRecheck()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            // The holder may have let go before the watch was in place.
            if let outcome = try attempt() { return outcome }
            let now = MonotonicClock.nanoseconds()
            guard now < deadline else { return .timedOut }
            var timeout = (deadline - now) / 1_000_000 + 1
            if let delay = recheck.delay { timeout = min(timeout, delay) }
            if !watching { timeout = min(timeout, LockRecheck.maximum) }
            var pfd = pollfd(fd: watching ? notify : -1, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, Int32(clamping: timeout))
            if ready > 0 {
                while read(notify, &buffer, buffer.count) > 0 {}
                recheck.eventSeen()
            } else if ready == 0 {
                recheck.lookedAgain()
            } else if errno != EINTR {
                throw Errno(rawValue: errno)
            }
        }
    }

    /// Releases the lock; also done when the value is deallocated.
    package func release() {
        guard fd >= 0 else { return }
        OFDLock.unlock(fd)
        Syscall.close(fd)
        fd = -1
    }
}

#endif
