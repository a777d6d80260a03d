import Synchronization
import TetherLoop

/// HTTP(S) requests driven by an event loop: libcurl's multi-socket
/// interface on the loop's `uv_poll` and `uv_timer` handles (`CurlMulti`),
/// with no thread or event loop of its own. `send` may be called from any
/// task; it runs on the caller's executor (no hop to Swift's shared pool),
/// the transfer itself on `loop`, which must be running. The process must
/// ignore SIGPIPE (Tether's executables do).
///
/// Every request keeps these rules: http and https only; redirects are not
/// followed (a 3xx is the answer: a credential goes only where it was
/// meant to); certificates are verified; the answer body is capped; and a
/// total deadline cuts off slow connections, slow headers and trickling
/// bodies alike. Proxies come from the environment as curl reads it
/// (`https_proxy`, `http_proxy`, `no_proxy`, `all_proxy`).
package final class HTTPClient: Sendable {
    package let loop: EventLoop
    private let multi: CurlMulti

    package init(loop: EventLoop) {
        self.loop = loop
        multi = CurlMulti(loop: loop)
    }

    deinit {
        // No request is running (each holds the client): let go of curl.
        loop.execute { [multi] in multi.end() }
    }

    /// Sends `request` and waits for the whole answer. Cancelling the task
    /// ends the transfer at once (`.cancelled`).
    package nonisolated(nonsending) func send(_ request: HTTPRequest) async throws(HTTPFailure) -> HTTPResponse {
        let multi = self.multi
        let loop = self.loop
        // The wait runs on the loop, where the transfer resumes it: the
        // closures below are not isolated to the caller, and without the
        // preference they would start a thread of Swift's shared pool.
        return try await withTaskExecutorPreference(loop.taskExecutor) { () async -> CurlTransfer.Outcome in
            // Weak: the transfer alone holds the caller's continuation, so a
            // transfer the loop drops unstarted ends (as cancelled) in its deinit.
            let running = WeakTransfer()
            return await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<CurlTransfer.Outcome, Never>) in
                    let transfer = CurlTransfer(request, continuation)
                    running.set(transfer)
                    // Read here, written on the loop: the job carries it.
                    let cancelled = Task.isCancelled
                    loop.execute {
                        if cancelled { transfer.cancelledEarly = true }
                        multi.start(transfer)
                    }
                }
            } onCancel: {
                if let transfer = running.get() { loop.execute { multi.cancel(transfer) } }
            }
        }.get()
    }

    /// Shorthand for `send(HTTPRequest(...))`.
    package nonisolated(nonsending) func send(_ method: String, _ url: String, headers: [(String, String)] = [], body: [UInt8]? = nil,
                     timeout: Double = HTTPRequest.defaultTimeout,
                     maximumBody: Int = HTTPRequest.defaultMaximumBody) async throws(HTTPFailure) -> HTTPResponse {
        try await send(HTTPRequest(method, url, headers: headers, body: body, timeout: timeout, maximumBody: maximumBody))
    }
}

/// The transfer a cancellation handler may end, without keeping it alive.
private final class WeakTransfer: Sendable {
    private struct Reference { weak var transfer: CurlTransfer? }
    private let reference = Mutex(Reference())

    func set(_ transfer: CurlTransfer) { reference.withLock { $0.transfer = transfer } }
    func get() -> CurlTransfer? { reference.withLock { $0.transfer } }
}
