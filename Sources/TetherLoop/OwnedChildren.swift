import Synchronization

/// The pids of this process's children a `ChildProcess` waits for: another
/// reaper (the host's, of orphans it inherits) must leave them, or their
/// exit status is lost.
package enum OwnedChildren {
    private static let pids = Mutex<Set<Int32>>([])

    static func add(_ pid: Int32) { _ = pids.withLock { $0.insert(pid) } }
    static func remove(_ pid: Int32) { _ = pids.withLock { $0.remove(pid) } }
    package static func contains(_ pid: Int32) -> Bool { pids.withLock { $0.contains(pid) } }
}
