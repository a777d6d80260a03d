import Synchronization

/// The pids of this process's children a `ChildProcess` waits for: another
/// reaper (the host's, of orphans it inherits) must leave them, or their
/// exit status is lost. That reaper is told when one is reaped, since an
/// ended child of a `ChildProcess` hides those ended after it.
package enum OwnedChildren {
    private static let pids = Mutex<Set<Int32>>([])
    private static let afterReap = LockedAction<Void>()

    static func add(_ pid: Int32) { _ = pids.withLock { $0.insert(pid) } }
    static func remove(_ pid: Int32) { _ = pids.withLock { $0.remove(pid) } }
    package static func contains(_ pid: Int32) -> Bool { pids.withLock { $0.contains(pid) } }

    /// A `ChildProcess` reaped `pid`.
    static func reaped(_ pid: Int32) {
        remove(pid)
        afterReap()
    }

    /// `body` after each reap by a `ChildProcess` (nil: nothing).
    package static func whenOneIsReaped(_ body: (@Sendable () -> Void)?) { afterReap.set(body.map { body in { @Sendable _ in body() } }) }
}
