import Synchronization

/// A function that one thread sets and others call, under a lock.
///
/// The function is kept in a struct: a bare function value read out of a
/// `Mutex` (`withLock { $0 }`) comes back wrapped in one more reabstraction
/// thunk, and the wrapper is kept (Swift 6.3), so each call went one level
/// deeper than the last. The host's reaper was called so once per reaped
/// child: a stop of thousands was quadratic, and a host up for long enough
/// would have run out of stack.
package final class LockedAction: Sendable {
    private struct Held: Sendable {
        let body: @Sendable () -> Void
    }

    private let held = Mutex<Held?>(nil)

    package init() {}

    /// Calls `body` from now on (nil: nothing).
    package func set(_ body: (@Sendable () -> Void)?) {
        held.withLock { $0 = body.map(Held.init) }
    }

    /// Calls the function set, if any, outside the lock.
    package func callAsFunction() {
        held.withLock { $0 }?.body()
    }
}
