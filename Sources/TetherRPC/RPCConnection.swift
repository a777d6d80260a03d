import SystemPackage
import TetherLoop

/// A JSON-RPC 2.0 peer over a stream: newline-delimited frames, bounded in
/// size; calls in both directions, matched by id. Lives on its loop.
///
/// Bad input never stalls or crashes the loop: a frame that is not JSON-RPC
/// gets an error response; a peer that sends mostly garbage (more than half
/// of its last 16 frames, or than `badFramesAllowed`), an oversized frame,
/// or lets its responses pile up past `maximumWriteQueue` is disconnected.
///
/// Work in flight is bounded (backpressure): while the peer has
/// `maximumInFlight` requests unanswered, or `pauseQueuedBytes` of answers
/// it has not read, nothing more of its input is read or run. The kernel's
/// socket buffer then fills and the peer's writes block; the host's loop
/// serves everyone else meanwhile.
///
/// A peer that ends only its side (`shutdown(SHUT_WR)`: `socat` at the end
/// of its input) still reads: what it asked is run and answered, then the
/// connection closes; our calls it can no longer answer fail at once.
package final class RPCConnection: @unchecked Sendable {
    package typealias Respond = (Result<JSONValue, RPCError>) -> Void
    /// Handles a request or notification. `respond` is a no-op for
    /// notifications; it may be called later, once.
    package typealias Handler = (_ connection: RPCConnection, _ method: String, _ params: JSONValue?,
                                 _ respond: @escaping Respond) -> Void

    package let stream: PipeStream
    package let peer: PeerCredentials?
    package var loop: EventLoop { stream.loop }
    package private(set) var isClosed = false

    private var handler: Handler?
    private var onClose: ((RPCConnection) -> Void)?
    private var framer: LineFramer
    private var pending: [JSONValue: Respond] = [:]
    private var nextID = 1
    /// The last 16 frames, newest in bit 0: 1 for a frame that was not JSON-RPC.
    private var recentFrames: UInt16 = 0
    /// Frames read but not run yet: held while the peer is over its bounds.
    private var waiting: [[UInt8]] = []
    private var waitingBytes = 0
    /// Reading is stopped until the peer's work in flight goes down.
    private var paused = false
    /// `pump` is running: an answer given inside it needs no second one.
    private var pumping = false
    /// A `pump` is due on the loop's next turn (`framesPerTurn`).
    private var continuing = false
    /// Why the peer is closing on us, if it said (a refusal with a null id,
    /// its `goodbye`): what calls still waiting fail with.
    private var closingReason: RPCError?
    /// The notification, {reason}, a peer sends before it closes on us
    /// (JSON-RPC has none): the schema names it, the transport only reads it.
    package let goodbye: String?
    /// The peer ended its side: nothing more is read.
    private var inputEnded = false
    /// Closed for what the peer did (a frame too large, mostly garbage,
    /// answers it would not read), not because it went.
    package private(set) var closedForMisbehaving = false

    /// More bad frames than this among the last 16 disconnect the peer
    /// (`badFramesAllowed`: 0 for a peer that sends none, a host to a client).
    package static let maximumBadFrames = 8
    private let badFramesAllowed: Int
    /// The most members a batch may have: each may cost a handler call and
    /// a response, and the whole batch is one frame.
    package static let maximumBatchMembers = 128
    package static let maximumWriteQueue = 4 << 20
    /// Requests of one peer run at once, at most: past it, its input waits.
    package static let maximumInFlight = 64
    /// Answers queued for one peer past which its input waits, until it reads.
    package static let pauseQueuedBytes = 64 << 10
    /// Frames of one peer run in one turn of the loop, at most (4: a turn
    /// of 100 flooding peers then costs tens of ms, not hundreds): the rest
    /// wait for the next turn, so a peer pipelining thousands of small
    /// requests delays the others' answers by a turn, not by its backlog.
    package static let framesPerTurn = 4

    /// Monotonic time (ns: no ties) of the last bytes received: the least
    /// recently active peer is the first to go when the server is full.
    package private(set) var lastActivity: UInt64 = 0
    /// An extension's (`RPCServer.pin`): no client, never evicted.
    package internal(set) var isPinned = false
    /// Requests from the peer not answered yet (a push waiting on its
    /// extensions, a token waiting on a refresh): such a peer is busy, not idle.
    package private(set) var unansweredRequests = 0
    /// The most bytes ever queued for this peer: a big one's end is worth
    /// giving memory back for.
    package private(set) var peakQueuedBytes = 0
    /// Bytes of input held for this peer: an incomplete frame, and frames
    /// waiting for its work in flight to go down.
    package var bufferedBytes: Int { framer.bufferedCount + waitingBytes }
    package var isPaused: Bool { paused }  // its input waits (backpressure): for tests and status
    /// Told when the bytes held for this peer may have changed (a send, a
    /// write done, input held): the server keeps its running total.
    var onHeldChanged: ((RPCConnection) -> Void)?
    /// What the server last counted of this peer's bytes.
    var accountedBytes = 0

    package init(stream: PipeStream, peer: PeerCredentials? = nil,
                 maximumFrameSize: Int = LineFramer.defaultMaximumFrameSize, goodbye: String? = nil,
                 badFramesAllowed: Int = RPCConnection.maximumBadFrames) {
        self.stream = stream
        self.peer = peer
        self.goodbye = goodbye
        self.badFramesAllowed = badFramesAllowed
        self.framer = LineFramer(maximumFrameSize: maximumFrameSize)
    }

    /// Starts reading. `onClose` runs once when either side closes.
    package func start(handler: @escaping Handler, onClose: ((RPCConnection) -> Void)? = nil) {
        self.handler = handler
        self.onClose = onClose
        lastActivity = MonotonicClock.nanoseconds()
        stream.onWritten = { [weak self] error in self?.written(error) }
        do {
            try stream.startReading { [weak self] event in self?.received(event) }
        } catch {
            close()
        }
    }

    /// A write left the queue: a peer that stopped reading may be below its
    /// bound again. A failed write means the peer is gone: one we still read
    /// from tells us so itself (after its last words); else closed here.
    private func written(_ error: Errno?) {
        guard !isClosed else { return }
        if error != nil {
            if paused || inputEnded { close() }
            return
        }
        onHeldChanged?(self)
        if paused { pumpNextTurn() }
        closeIfAnswered()
    }

    /// Calls `method` on the peer. The returned id cancels the call
    /// (`cancel(_:)`): its completion is dropped and a late answer ignored.
    @discardableResult
    package func call(_ method: String, _ params: JSONValue? = nil, _ completion: @escaping Respond) -> JSONValue {
        let id = JSONValue.integer(nextID)
        nextID += 1
        guard !isClosed, !inputEnded else {
            completion(.failure(.internalError(isClosed ? "connection closed" : "the peer ended its side")))
            return id
        }
        pending[id] = completion
        send(.request(id: id, method: method, params: params))
        return id
    }

    /// Forgets the call with `id`: nothing is kept for an answer that may never come.
    package func cancel(_ id: JSONValue) {
        pending.removeValue(forKey: id)
    }

    /// Calls waiting for the peer's answer.
    package var pendingCalls: Int { pending.count }

    /// Bytes queued for this peer and not yet taken by the kernel.
    package var queuedBytes: Int { stream.writeQueueSize }

    package func notify(_ method: String, _ params: JSONValue? = nil) {
        send(.notification(method: method, params: params))
    }

    package func send(_ message: RPCMessage) {
        enqueue(message.encoded())
    }

    private func enqueue(_ frame: [UInt8]) {
        guard !isClosed else { return }
        stream.write(frame)
        let queued = stream.writeQueueSize
        peakQueuedBytes = max(peakQueuedBytes, queued)
        // One large answer (metrics of a thousand extensions) goes out
        // whole; answers piling up behind it do not.
        if queued > Self.maximumWriteQueue, queued - frame.count > Self.pauseQueuedBytes {
            closedForMisbehaving = true
            return close()
        }
        onHeldChanged?(self)
    }

    package func close() {
        guard !isClosed else { return }
        isClosed = true
        let reason = closingReason ?? .internalError("connection closed")
        waiting.removeAll()
        waitingBytes = 0
        handler = nil
        onHeldChanged = nil
        stream.close()
        failPendingCalls(reason)
        let onClose = self.onClose
        self.onClose = nil
        onClose?(self)
    }

    private func received(_ event: PipeStream.ReadEvent) {
        switch event {
        case .data(let bytes):
            lastActivity = MonotonicClock.nanoseconds()
            let frames: [[UInt8]]
            do {
                frames = try framer.append(bytes)
            } catch {
                let limit = "a message larger than \(framer.maximumFrameSize >> 20) MiB"
                send(.response(id: .null, result: .failure(.invalidRequest(limit))))
                closingReason = RPCError(code: -32603, message: "the answer was \(limit), the most taken")
                closedForMisbehaving = true
                close()
                return
            }
            for frame in frames {
                waiting.append(frame)
                waitingBytes += frame.count
            }
            pump()
            // What is held for this peer counts against the server's budget.
            if !isClosed { onHeldChanged?(self) }
        case .end where stream.peerStillReads:
            inputEnded = true
            stream.stopReading()
            // A last frame without its newline (`printf '%s' … | socat`) is a frame.
            if let last = framer.takeRemainder() {
                waiting.append(last)
                waitingBytes += last.count
            }
            failPendingCalls(closingReason ?? .internalError("the peer ended its side"))
            pump()
            closeIfAnswered()
        case .end, .failed:
            close()
        }
    }

    /// Our calls waiting for answers that will not come, failed with `reason`.
    private func failPendingCalls(_ reason: RPCError) {
        let calls = pending
        pending.removeAll()
        for (_, respond) in calls { respond(.failure(reason)) }
    }

    /// Closes a peer that ended its side once all it asked is answered and written.
    private func closeIfAnswered() {
        guard inputEnded, !isClosed, waiting.isEmpty, !continuing, unansweredRequests == 0,
              stream.writeQueueSize == 0 else { return }
        close()
    }

    /// Whether the peer has as much work in flight as it may.
    private var isOverBound: Bool {
        unansweredRequests >= Self.maximumInFlight || stream.writeQueueSize >= Self.pauseQueuedBytes
    }

    /// Runs waiting frames while the peer is within its bounds; stops
    /// reading when it is not, and reads again once it is.
    private func pump() {
        guard !pumping else { return }
        pumping = true
        defer { pumping = false }
        var next = 0
        while next < waiting.count, next < Self.framesPerTurn, !isClosed, !isOverBound {
            let frame = waiting[next]
            next += 1
            waitingBytes -= frame.count
            dispatch(frame)
        }
        guard !isClosed else { return }
        if next == waiting.count { waiting = [] } else if next > 0 { waiting.removeFirst(next) }
        // Stopped by the turn's quota, not by a bound: the rest next turn.
        if !waiting.isEmpty, !isOverBound { pumpNextTurn() }
        let over = !waiting.isEmpty || isOverBound
        if over, !paused {
            paused = true
            stream.stopReading()
        } else if !over, paused, !inputEnded {
            paused = false
            do { try stream.resumeReading() } catch { close() }
        }
    }

    /// Runs `pump` on the loop's next turn, once however often asked. A
    /// finished write or answer that frees a paused peer waits for it too:
    /// run at once, each answer leaving let in `framesPerTurn` more, and a
    /// peer whose answers the kernel took as fast as they came had every
    /// frame it sent run in one turn, while a new client waited.
    private func pumpNextTurn() {
        guard !continuing, !isClosed else { return }
        continuing = true
        _ = loop.execute { [self] in
            continuing = false
            pump()
            closeIfAnswered()
        }
    }

    private func dispatch(_ frame: [UInt8]) {
        let value: JSONValue
        let message: RPCMessage
        do {
            value = try RPCMessage.parseJSON(frame)
            if case .array(let members) = value { return dispatchBatch(members) }
            message = try RPCMessage(value)
        } catch {
            refused(error)
            return
        }
        noteFrame(garbage: false)
        switch message {
        case .request(let id, let method, let params):
            handle(id: id, method: method, params: params) { [weak self] response in self?.send(response) }
        case .notification(let method, let params):
            if method == goodbye, let reason = params?["reason"]?.stringValue {
                closingReason = .refused(reason)
            }
            handler?(self, method, params) { _ in }
        case .response(let id, let result):
            if id == .null, case .failure(let error) = result { closingReason = error }
            pending.removeValue(forKey: id)?(result)
        }
    }

    /// A frame that is not JSON-RPC: an error with a null id, and the peer
    /// goes if most of its recent frames were like it.
    private func refused(_ error: RPCError) {
        send(.response(id: .null, result: .failure(error)))
        noteFrame(garbage: true)
    }

    /// One more frame in the recent window; a peer whose recent frames are
    /// mostly garbage is disconnected.
    private func noteFrame(garbage: Bool) {
        recentFrames = recentFrames << 1 | (garbage ? 1 : 0)
        if garbage, recentFrames.nonzeroBitCount > badFramesAllowed {
            closingReason = closingReason ?? RPCError(code: -32603, message: "what came back is not JSON-RPC")
            closedForMisbehaving = true
            close()
        }
    }

    /// Runs a request; `reply` gets its response once, when the handler answers.
    private func handle(id: JSONValue, method: String, params: JSONValue?, reply: @escaping (RPCMessage) -> Void) {
        var answered = false
        unansweredRequests += 1
        handler?(self, method, params) { [weak self] result in
            guard !answered, let self else { return }
            answered = true
            self.unansweredRequests -= 1
            reply(.response(id: id, result: result))
            // Perhaps below its bound again: what waits may run, next turn;
            // a peer that ended its side is closed then too, not inside
            // the handler's answer.
            if self.paused || self.inputEnded { self.pumpNextTurn() }
        }
    }

    /// JSON-RPC 2.0 §6: the members run as if sent one by one; their
    /// responses (none for notifications, -32600 with a null id for an
    /// invalid member) go back together in one array, once all are answered.
    /// An empty batch is one invalid request; a batch of notifications gets
    /// nothing back.
    private func dispatchBatch(_ members: [JSONValue]) {
        guard !members.isEmpty else { return refused(.invalidRequest("an empty batch")) }
        guard members.count <= Self.maximumBatchMembers else {
            return refused(.invalidRequest("a batch may have at most \(Self.maximumBatchMembers) members"))
        }
        let reply = BatchReply(count: members.count) { [weak self] responses in
            if !responses.isEmpty { self?.sendBatch(responses) }
        }
        var invalid = 0
        for (slot, member) in members.enumerated() where !isClosed {
            let message: RPCMessage
            do {
                message = try RPCMessage(member)
            } catch {
                invalid += 1
                reply.refuse(slot, .response(id: .null, result: .failure(error)))
                continue
            }
            switch message {
            case .request(let id, let method, let params):
                reply.expect()
                handle(id: id, method: method, params: params) { response in reply.answer(slot, response) }
            case .notification(let method, let params):
                handler?(self, method, params) { _ in }
            case .response(let id, let result):
                pending.removeValue(forKey: id)?(result)
            }
        }
        reply.seal()
        // A batch of nothing but garbage is a garbage frame.
        noteFrame(garbage: invalid == members.count)
    }

    private func sendBatch(_ responses: [RPCMessage]) {
        enqueue(RPCMessage.encodedBatch(responses))
    }
}
