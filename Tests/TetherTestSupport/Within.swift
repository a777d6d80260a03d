import Foundation
import Synchronization
import TetherLoop

/// Awaits `operation`, or throws `TestTimeout` after `seconds`: a test that
/// waits on something that may never come (a task whose executor is gone)
/// fails instead of hanging the run. The operation is cancelled then.
package func within<T: Sendable>(
    _ seconds: Double, _ what: String, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let waiter = Waiter<T>()
    return try await withCheckedThrowingContinuation { continuation in
        waiter.continuation.withLock { $0 = continuation }
        let task = Task {
            let result: Result<T, any Error>
            do { result = .success(try await operation()) } catch { result = .failure(error) }
            waiter.continuation.withLock { $0.take() }?.resume(with: result)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
            guard let waiting = waiter.continuation.withLock({ $0.take() }) else { return }
            task.cancel()
            waiting.resume(throwing: TestTimeout(what: "\(what) within \(seconds) s"))
        }
    }
}

/// Whichever comes first, the answer or the time limit, resumes the caller.
private final class Waiter<T: Sendable>: Sendable {
    let continuation = Mutex<CheckedContinuation<T, any Error>?>(nil)
}

/// A call that may block (on a FIFO, a lock): `body` on a thread of its
/// own, awaited at most `seconds`: nil if it has not returned by then.
/// `release` then runs, to let it return (the thread is waited for 10 s
/// more): a `release` that cannot leaves the thread blocked.
package func blockingCall<T: Sendable>(within seconds: Double, release: @escaping @Sendable () -> Void = {},
                                       _ body: @escaping @Sendable () -> T) async throws -> T? {
    try await offThePool {
        let result = Mutex<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        try DetachedThread.start {
            let value = body()
            result.withLock { $0 = value }
            done.signal()
        }
        guard done.wait(timeout: .now() + seconds) == .success else {
            release()
            _ = done.wait(timeout: .now() + 10)
            return nil
        }
        return result.withLock { $0 }
    }
}
