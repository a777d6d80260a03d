import TetherLoop

/// When to look at a lock again after an event on its file that did not
/// free it: the kernel reports a dying holder's close a moment before it
/// drops its locks. Eight looks, 1 ms doubling to 128 ms (`Backoff`), then
/// none until the next event: the one schedule of every wait for a lock
/// holder (`LockWatcher` on a loop, `ExclusiveLock`'s blocking wait).
struct LockRecheck {
    /// The longest wait between looks; also the period of a wait with no
    /// inotify instance to tell it of events.
    static let maximum: UInt64 = 128
    private static let looks = 8
    private var backoff = Backoff(first: 1, maximum: maximum)
    private var armed = false

    /// An event came: the looks start again from the first.
    mutating func eventSeen() {
        backoff.reset()
        armed = true
    }

    /// The wait before the next look; nil when none is due until an event.
    var delay: UInt64? {
        armed && backoff.failures < Self.looks ? backoff.delay(beforeRetry: backoff.failures + 1) : nil
    }

    /// The look `delay` announced was made (and the lock was still held).
    mutating func lookedAgain() {
        if delay != nil { _ = backoff.next() }
    }
}
