import TetherLoop

extension HTTPClient {
    /// For a command-line tool: runs `body` with a client whose event loop
    /// runs on the calling thread until `body` returns. The body prefers that
    /// loop as its task executor, so its waiting costs no thread of Swift's
    /// pool; it must not block (it would hold the loop). Throws the body's
    /// error, or the loop's `Errno` if it cannot start.
    package static func withLoop<T: Sendable>(_ body: @escaping @Sendable (HTTPClient) async throws -> T) throws -> T {
        let outcome = try EventLoop.runUntilDone { (loop, done: LoopCompletion<Result<T, any Error>>) in
            let http = HTTPClient(loop: loop)
            Task(executorPreference: loop.taskExecutor) {
                do { done.finish(.success(try await body(http))) } catch { done.finish(.failure(error)) }
            }
        }
        guard let outcome else { throw HTTPFailure.cancelled }
        return try outcome.get()
    }
}
