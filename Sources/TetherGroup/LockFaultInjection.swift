import Synchronization

/// A seam for tests: runs between taking a lock and checking that its path
/// still names the locked inode, so a test can swap the file at exactly the
/// instant a real race would. Never set outside tests (`@testable import`).
enum LockFaultInjection {
    private static let hook = Mutex<(@Sendable (String) -> Void)?>(nil)
    /// Cheap to read on every acquisition: an atomic flag, no lock.
    private static let armed = Atomic<Bool>(false)

    static func afterLocking(_ path: String) {
        guard armed.load(ordering: .relaxed) else { return }
        hook.withLock { $0 }?(path)
    }

    /// Installs `body` (nil removes it). Internal: tests only.
    static func setAfterLocking(_ body: (@Sendable (String) -> Void)?) {
        hook.withLock { $0 = body }
        armed.store(body != nil, ordering: .relaxed)
    }
}
