import Synchronization
import TetherHTTP
import TetherLoop

/// Runs async work from a synchronous command and waits for its result.
/// The main thread runs an event loop meanwhile: the work prefers it as its
/// task executor, and its HTTP requests (the client handed to it) are
/// driven on it, so a command's waiting costs no thread of Swift's pool.
/// The work must not block: it would hold the loop.
func runAsync<T: Sendable>(_ body: @escaping @Sendable (HTTPClient) async throws -> T) throws -> T {
    let loop: EventLoop
    do { loop = try EventLoop() } catch { throw CLIError.environment("cannot start the event loop: \(error)") }
    let http = HTTPClient(loop: loop)
    let result = Mutex<Result<T, any Error>?>(nil)
    Task(executorPreference: loop) {
        let outcome: Result<T, any Error>
        do { outcome = .success(try await body(http)) } catch { outcome = .failure(error) }
        result.withLock { $0 = outcome }
        loop.stop()
    }
    loop.run()
    guard let outcome = result.withLock({ $0 }) else { throw CLIError.environment("the task ended without a result") }
    return try outcome.get()
}
