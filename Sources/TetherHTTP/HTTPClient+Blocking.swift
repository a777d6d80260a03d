import Synchronization
import TetherLoop

extension HTTPClient {
    /// For a command-line tool: runs `body` with a client whose event loop
    /// runs on the calling thread until `body` returns. The body prefers that
    /// loop as its task executor, so its waiting costs no thread of Swift's
    /// pool; it must not block (it would hold the loop). Throws the body's
    /// error, or the loop's `Errno` if it cannot start.
    public static func withLoop<T: Sendable>(_ body: @escaping @Sendable (HTTPClient) async throws -> T) throws -> T {
        let loop = try EventLoop()
        let http = HTTPClient(loop: loop)
        let result = Outcome<T>()
        Task(executorPreference: loop.taskExecutor) {
            let outcome: Result<T, any Error>
            do { outcome = .success(try await body(http)) } catch { outcome = .failure(error) }
            result.value.withLock { $0 = outcome }
            loop.stop()
        }
        loop.run()
        guard let outcome = result.value.withLock({ $0 }) else { throw HTTPFailure.cancelled }
        return try outcome.get()
    }
}

/// Where `withLoop`'s task leaves its result.
private final class Outcome<T: Sendable>: Sendable {
    let value = Mutex<Result<T, any Error>?>(nil)
}
