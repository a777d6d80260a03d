import CTetherCurl
import SystemPackage
import TetherLoop

/// libcurl's multi-socket interface driven by a libuv loop, as curl's
/// `multi-uv` example does: curl names the sockets it wants watched
/// (`uv_poll` for each) and the timeout it wants (one `uv_timer`), and is
/// told of each readiness and expiry. No thread and no event loop of
/// curl's own; every call happens on the loop thread. Made at the first
/// request; ended when its client goes or the loop stops, failing what is
/// still running.
final class CurlMulti: @unchecked Sendable {
    let loop: EventLoop
    private var multi: UnsafeMutableRawPointer?
    private var timer: LoopTimer?
    private var watchers: [Int32: (watcher: PollWatcher, events: PollWatcher.Events)] = [:]
    /// Transfers whose socket could not be watched: failed once curl returns.
    private var unwatchable: [UnsafeMutableRawPointer] = []
    /// Running transfers by easy handle; they hold the callers.
    private var transfers: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    /// Held while curl's callbacks may name this object.
    private var retained: Unmanaged<CurlMulti>?
    /// Its `whenStopping`, forgotten once it ends (a client per token broker).
    private var stopRegistration: Int?
    private var ended = false

    init(loop: EventLoop) {
        self.loop = loop
    }

    /// Starts `transfer`, or ends it with the reason it cannot start.
    func start(_ transfer: CurlTransfer) {
        loop.preconditionInLoop()
        guard !transfer.cancelledEarly else { return transfer.finish(.failure(.cancelled)) }
        guard !ended else { return transfer.finish(.failure(.cancelled)) }
        if let failure = open() { return transfer.finish(.failure(failure)) }
        if let failure = transfer.prepare() { return transfer.finish(.failure(failure)) }
        guard let multi, let easy = transfer.easy, tether_curl_multi_add_handle(multi, easy) == 0 else {
            return transfer.finish(.failure(.failed("libcurl did not take the request")))
        }
        transfers[easy] = transfer
        failUnwatchable()
    }

    /// Ends `transfer` now if it runs; else it will not start.
    func cancel(_ transfer: CurlTransfer) {
        loop.preconditionInLoop()
        guard let easy = transfer.easy, transfers.removeValue(forKey: easy) != nil else {
            transfer.cancelledEarly = true
            return
        }
        if let multi { _ = tether_curl_multi_remove_handle(multi, easy) }
        transfer.finish(.failure(.cancelled))
    }

    /// Fails every running transfer and lets go of curl and the handles.
    func end() {
        loop.preconditionInLoop()
        guard !ended else { return }
        ended = true
        let running = transfers
        transfers = [:]
        for (easy, transfer) in running {
            if let multi { _ = tether_curl_multi_remove_handle(multi, easy) }
            transfer.finish(.failure(.cancelled))
        }
        // The handles before the sockets: curl closes them in its cleanup.
        for entry in watchers.values { entry.watcher.close() }
        watchers = [:]
        if let multi { _ = tether_curl_multi_cleanup(multi) }
        multi = nil
        timer?.close()
        timer = nil
        retained?.release()
        retained = nil
        if let stopRegistration { loop.forgetStopping(stopRegistration) }
        stopRegistration = nil
    }

    /// Loads libcurl and makes the multi handle, once.
    private func open() -> HTTPFailure? {
        if multi != nil { return nil }
        if let failure = CurlLibrary.load() { return failure }
        guard let made = tether_curl_multi_init() else { return .failed("libcurl could not start") }
        let me = Unmanaged.passRetained(self)
        guard tether_curl_multi_set_callbacks(made, { easy, socket, action, client, _ in
            guard let client else { return 0 }
            Unmanaged<CurlMulti>.fromOpaque(client).takeUnretainedValue().watch(easy, socket, action)
            return 0
        }, { _, milliseconds, client in
            guard let client else { return -1 }
            Unmanaged<CurlMulti>.fromOpaque(client).takeUnretainedValue().schedule(milliseconds)
            return 0
        }, me.toOpaque()) == 0 else {
            me.release()
            _ = tether_curl_multi_cleanup(made)
            return .failed("libcurl refused the event callbacks")
        }
        multi = made
        retained = me
        timer = LoopTimer(loop: loop)
        stopRegistration = loop.whenStopping { [weak self] in self?.end() }
        return nil
    }

    // MARK: - What curl asks for (inside curl calls: no curl calls here)

    /// CURLMOPT_SOCKETFUNCTION: watch `socket` for `action`, or stop. A
    /// socket that cannot be watched fails its own transfer once curl
    /// returns (answering curl -1 would end every transfer of the multi).
    private func watch(_ easy: UnsafeMutableRawPointer?, _ socket: Int32, _ action: Int32) {
        if Int(action) == TETHER_CURL_POLL_REMOVE {
            watchers.removeValue(forKey: socket)?.watcher.close()
            return
        }
        var events: PollWatcher.Events = []
        if Int(action) & TETHER_CURL_POLL_IN != 0 { events.insert(.readable) }
        if Int(action) & TETHER_CURL_POLL_OUT != 0 { events.insert(.writable) }
        do throws(Errno) {
            try start(socket, events)
        } catch {
            watchers.removeValue(forKey: socket)?.watcher.close()
            if let easy { unwatchable.append(easy) }
        }
    }

    private func start(_ socket: Int32, _ events: PollWatcher.Events) throws(Errno) {
        let watcher: PollWatcher
        if let existing = watchers[socket]?.watcher {
            watcher = existing
        } else {
            watcher = try PollWatcher(loop: loop, fileDescriptor: socket)
        }
        watchers[socket] = (watcher, events)
        try watcher.start(events) { [unowned self] result in self.ready(socket, result) }
    }

    private func failUnwatchable() {
        guard let multi else { return }
        let failing = unwatchable
        unwatchable = []
        for easy in failing {
            guard let transfer = transfers.removeValue(forKey: easy) else { continue }
            _ = tether_curl_multi_remove_handle(multi, easy)
            transfer.finish(.failure(.failed("cannot watch a socket of the request")))
        }
    }

    /// CURLMOPT_TIMERFUNCTION: -1 stops the timer, else (re)starts it.
    private func schedule(_ milliseconds: Int) {
        guard let timer else { return }
        guard milliseconds >= 0 else { return timer.stop() }
        timer.start(afterMilliseconds: UInt64(milliseconds)) { [unowned self] in self.act(Int32(TETHER_CURL_SOCKET_TIMEOUT), 0) }
    }

    // MARK: - Telling curl

    private func ready(_ socket: Int32, _ result: Result<PollWatcher.Events, Errno>) {
        var flags: Int32 = 0
        switch result {
        case .success(let events):
            if events.contains(.readable) || events.contains(.disconnect) { flags |= Int32(TETHER_CURL_CSELECT_IN) }
            if events.contains(.writable) { flags |= Int32(TETHER_CURL_CSELECT_OUT) }
        case .failure:
            flags = Int32(TETHER_CURL_CSELECT_ERR)
        }
        act(socket, flags)
        // libuv stops a handle that reported an error: if curl still wants
        // the socket as it was, watch it again.
        if case .failure = result, let entry = watchers[socket] { try? start(socket, entry.events) }
    }

    private func act(_ socket: Int32, _ flags: Int32) {
        guard let multi else { return }
        var running: Int32 = 0
        _ = tether_curl_multi_socket_action(multi, socket, flags, &running)
        var code: Int32 = 0
        while let easy = tether_curl_multi_next_done(multi, &code) {
            _ = tether_curl_multi_remove_handle(multi, easy)
            transfers.removeValue(forKey: easy)?.complete(code)
        }
        failUnwatchable()
    }
}
