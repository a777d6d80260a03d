import Dispatch
import Synchronization

/// Runs async work from a synchronous command and waits for its result.
/// The work runs on Swift's concurrency pool; the main thread only waits.
func runAsync<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let result = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let outcome: Result<T, any Error>
        do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
        result.withLock { $0 = outcome }
        done.signal()
    }
    done.wait()
    guard let outcome = result.withLock({ $0 }) else { throw CLIError.environment("the task ended without a result") }
    return try outcome.get()
}
