import SystemPackage
import TetherGroup
import TetherLoop

/// What a refresh waits for on a thread of its own, so the loop it runs on
/// goes on: the refresh lock held by another process, and the keyring.
extension TokenBroker {
    /// Runs `body` (blocking: the keyring) on a thread of its own.
    static func offLoop<T: Sendable>(_ body: @escaping @Sendable () throws(AuthError) -> T) async throws(AuthError) -> T {
        let result: Result<T, AuthError> = await withCheckedContinuation { continuation in
            do throws(Errno) {
                try DetachedThread.start {
                    do throws(AuthError) { continuation.resume(returning: .success(try body())) } catch {
                        continuation.resume(returning: .failure(error))
                    }
                }
            } catch {
                continuation.resume(returning: .failure(.keyring(KeyringError("cannot start a thread for the keyring: \(error)"))))
            }
        }
        return try result.get()
    }

    /// Takes the refresh lock without blocking a cooperative thread: the
    /// bounded wait runs on a thread of its own.
    static func acquire(_ path: String, timeoutMilliseconds: Int) async throws(GroupError) -> ExclusiveLock {
        if let lock = try ExclusiveLock.tryAcquire(path: path) { return lock }
        let result: Result<ExclusiveLock, GroupError> = await withCheckedContinuation { continuation in
            // The thread ends by the deadline at the latest.
            do throws(Errno) {
                try DetachedThread.start {
                    do throws(GroupError) {
                        continuation.resume(returning: .success(
                            try ExclusiveLock.acquire(path: path, timeoutMilliseconds: timeoutMilliseconds)))
                    } catch {
                        continuation.resume(returning: .failure(error))
                    }
                }
            } catch {
                continuation.resume(returning: .failure(.system("pthread_create", path: path, error)))
            }
        }
        return try result.get()
    }
}
