import Foundation
import Synchronization

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
