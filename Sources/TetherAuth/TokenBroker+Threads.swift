import SystemPackage
import TetherGroup
import TetherLoop

/// What a refresh waits for on a thread of its own, so the loop it runs on
/// goes on: the refresh lock held by another process, and the keyring.
extension TokenBroker {
    /// Runs `body` (blocking: the keyring) on a thread of its own.
    static func offLoop<T: Sendable>(_ body: @escaping @Sendable () throws(AuthError) -> T) async throws(AuthError) -> T {
        try await DetachedThread.result(of: body) { .keyring(KeyringError("cannot start a thread for the keyring: \($0)")) }
    }

    /// Takes the refresh lock without blocking a cooperative thread: the
    /// bounded wait (it ends by the deadline at the latest) runs on a thread of its own.
    static func acquire(_ path: String, timeoutMilliseconds: Int) async throws(GroupError) -> ExclusiveLock {
        if let lock = try ExclusiveLock.tryAcquire(path: path) { return lock }
        return try await DetachedThread.result(of: { () throws(GroupError) in
            try ExclusiveLock.acquire(path: path, timeoutMilliseconds: timeoutMilliseconds)
        }, noThread: { .system("pthread_create", path: path, $0) })
    }
}
