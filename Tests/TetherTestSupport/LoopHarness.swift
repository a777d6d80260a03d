import TetherLoop

package struct LoopTimeout: Error {}

/// Runs `body` on a fresh event loop thread and waits for it to call
/// `finish`, bounded by a loop timer (no sleeping). The loop is shut down
/// afterwards, which closes any handle the body left open.
package func onLoop<T: Sendable>(
    timeoutMilliseconds: UInt64 = 10_000,
    _ body: @escaping (EventLoop, @escaping (T) -> Void) throws -> Void
) async throws -> T {
    let thread = try EventLoopThread()
    defer { thread.shutdown() }
    nonisolated(unsafe) let body = body
    return try await withCheckedThrowingContinuation { continuation in
        let loop = thread.loop
        loop.execute {
            var done = false
            let timer = LoopTimer(loop: loop)
            let complete: (Result<T, Error>) -> Void = { result in
                guard !done else { return }
                done = true
                timer.close()
                continuation.resume(with: result)
            }
            timer.start(afterMilliseconds: timeoutMilliseconds) { complete(.failure(LoopTimeout())) }
            do {
                try body(loop) { complete(.success($0)) }
            } catch {
                complete(.failure(error))
            }
        }
    }
}

/// Runs a blocking wait on a thread of its own and awaits it: a test that
/// blocks a thread of Swift's small cooperative pool can starve the very
/// task it waits for.
package func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        do {
            try DetachedThread.start { continuation.resume(with: Result { try body() }) }
        } catch {
            continuation.resume(throwing: error)
        }
    }
}

