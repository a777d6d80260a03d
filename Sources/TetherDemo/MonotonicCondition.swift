#if canImport(Glibc)
import Glibc
#endif
import TetherLoop

/// A mutex with a condition variable whose timed waits run on the monotonic
/// clock: NSCondition's deadlines are wall-clock dates, which a clock step
/// (NTP, a VM resuming) would stretch or cut short.
final class MonotonicCondition: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }
    func broadcast() { pthread_cond_broadcast(condition) }

    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Waits (holding the lock) for a broadcast or the deadline, in
    /// `MonotonicClock` nanoseconds. False once the deadline has passed.
    func wait(untilNanoseconds deadline: UInt64) -> Bool {
        guard MonotonicClock.nanoseconds() < deadline else { return false }
        var time = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        pthread_cond_timedwait(condition, mutex, &time)
        return MonotonicClock.nanoseconds() < deadline
    }
}
