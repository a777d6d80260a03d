import Synchronization

/// A function that one thread sets and others call, under a lock: the
/// host's reaper hook, the store-corruption observer, the lock seam.
///
/// The function is kept in a struct: a bare function value read out of a
/// `Mutex` (`withLock { $0 }`) comes back wrapped in one more reabstraction
/// thunk, and the wrapper is kept (Swift 6.3), so each call went one level
/// deeper than the last. The host's reaper was called so once per reaped
/// child: a stop of thousands was quadratic, and a host up for long enough
/// would have run out of stack.
package final class LockedAction<Argument>: Sendable {
    private struct Held: Sendable {
        let body: @Sendable (Argument) -> Void
    }

    private let held = Mutex<Held?>(nil)

    package init() {}

    /// Calls `body` from now on (nil: nothing).
    package func set(_ body: (@Sendable (Argument) -> Void)?) {
        held.withLock { $0 = body.map(Held.init) }
    }

    /// Calls the function set, if any, outside the lock.
    package func callAsFunction(_ argument: Argument) {
        held.withLock { $0 }?.body(argument)
    }
}

extension LockedAction where Argument == Void {
    package func callAsFunction() { self(()) }
}
