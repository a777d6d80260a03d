import Synchronization

/// A seam for tests: runs between taking a lock and checking that its path
/// still names the locked inode, so a test can swap the file at exactly the
/// instant a real race would. Never set outside tests (`@testable import`).
enum LockFaultInjection {
    /// In a struct, as `CorruptionObserver`'s.
    private struct Hook: Sendable {
        let body: @Sendable (String) -> Void
    }

    private static let hook = Mutex<Hook?>(nil)
    /// Cheap to read on every acquisition: an atomic flag, no lock.
    private static let armed = Atomic<Bool>(false)

    static func afterLocking(_ path: String) {
        guard armed.load(ordering: .relaxed) else { return }
        hook.withLock { $0 }?.body(path)
    }

    /// Installs `body` (nil removes it). Internal: tests only.
    static func setAfterLocking(_ body: (@Sendable (String) -> Void)?) {
        hook.withLock { $0 = body.map(Hook.init) }
        armed.store(body != nil, ordering: .relaxed)
    }
}
