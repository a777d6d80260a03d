import Synchronization
import TetherLoop

/// A seam for tests: runs at the instants a real race strikes a group file
/// (after it is opened and before it is looked at: a lock file, a store; a
/// lock file after it is locked and before its path is checked), so a test
/// can swap the file at exactly that instant. Never set outside tests
/// (`@testable import`).
enum LockFaultInjection {
    enum Moment: Sendable {
        /// Opened, not yet inspected (`OwnedFile.opening`).
        case opened
        /// Locked, its path not yet checked.
        case locked
    }

    private static let hook = LockedAction<(moment: Moment, path: String)>()
    /// Cheap to read on every acquisition: an atomic flag, no lock.
    private static let armed = Atomic<Bool>(false)

    static func at(_ moment: Moment, _ path: String) {
        guard armed.load(ordering: .relaxed) else { return }
        hook((moment, path))
    }

    static func afterLocking(_ path: String) { at(.locked, path) }

    /// Installs `body` (nil removes it). Internal: tests only.
    static func set(_ body: (@Sendable (Moment, String) -> Void)?) {
        hook.set(body.map { body in { @Sendable in body($0.moment, $0.path) } })
        armed.store(body != nil, ordering: .relaxed)
    }

    static func setAfterLocking(_ body: (@Sendable (String) -> Void)?) {
        guard let body else { return set(nil) }
        set { moment, path in
            if moment == .locked { body(path) }
        }
    }
}
