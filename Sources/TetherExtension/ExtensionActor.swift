import SystemPackage
import TetherLoop

/// The extension's one thread of control: a global actor whose executor is
/// the extension's libuv loop, run on the main thread by the SDK's `main`.
///
/// The role protocols (`Widget`, `NotificationService`, `Keyboard`) and
/// `ExtensionContext` are isolated to it, so an author's code and the SDK's
/// state live on one thread, the compiler checks every access, and the
/// loop's handles (timers, the host connection, watchers) are used where
/// they must be. Work that is not isolated (a `nonisolated` async function,
/// the HTTP client) runs elsewhere and comes back with `await`.
@globalActor
public actor ExtensionActor {
    public static let shared = ExtensionActor()

    /// The loop, made once on first use. It can only fail when the process
    /// is out of descriptors; `ExtensionMain` checks before anything runs.
    static let made: Result<EventLoop, Errno> = Result { () throws(Errno) in try EventLoop() }

    /// The loop the SDK runs: the actor's executor.
    static var loop: EventLoop? { try? made.get() }

    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        switch Self.made {
        case .success(let loop): loop.asUnownedSerialExecutor()
        // Never used: without a loop the extension exits before any
        // isolated code runs. A real executor, so nothing can trap here.
        case .failure: MainActor.sharedUnownedExecutor
        }
    }

    /// Starts `body` on the actor in a task that prefers the loop as its
    /// task executor too. An await that resumes through a continuation
    /// resumes on the task's executor before hopping back to the actor: in
    /// a task without the preference that is Swift's shared pool, whose
    /// threads (and libdispatch's manager thread, which stays) would start
    /// for nothing. The SDK starts every task of its own this way.
    @discardableResult
    static func task<T: Sendable>(_ body: sending @escaping @ExtensionActor () async -> T) -> Task<T, Never> {
        Task(executorPreference: loop?.taskExecutor, operation: body)
    }

    /// Runs `operation` isolated to the extension actor from a loop
    /// callback (a timer, a socket read), which runs on the actor's thread
    /// but is not known to the compiler as isolated. Checked: off the
    /// loop's thread it stops the process, as `MainActor.assumeIsolated`.
    static func assumeIsolated<T: Sendable>(_ operation: @ExtensionActor () throws -> T) rethrows -> T {
        typealias Isolated = @ExtensionActor () throws -> T
        typealias Plain = () throws -> T
        shared.preconditionIsolated()
        return try withoutActuallyEscaping(operation) { (escaping: @escaping Isolated) throws -> T in
            try unsafeBitCast(escaping, to: Plain.self)()
        }
    }
}
