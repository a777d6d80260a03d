import TetherLoop

/// A JSON-RPC 2.0 peer over a stream: newline-delimited frames, bounded in
/// size; calls in both directions, matched by id. Lives on its loop.
///
/// Bad input never stalls or crashes the loop: a frame that is not JSON-RPC
/// gets an error response; a peer that sends mostly garbage (more than half
/// of its last 16 frames), sends an oversized frame, or stops reading its
/// responses is disconnected.
public final class RPCConnection: @unchecked Sendable {
    public typealias Respond = (Result<JSONValue, RPCError>) -> Void
    /// Handles a request or notification. `respond` is a no-op for
    /// notifications; it may be called later, once.
    public typealias Handler = (_ connection: RPCConnection, _ method: String, _ params: JSONValue?,
                                _ respond: @escaping Respond) -> Void

    public let stream: PipeStream
    public let peer: PeerCredentials?
    public var loop: EventLoop { stream.loop }
    public private(set) var isClosed = false

    private var handler: Handler?
    private var onClose: ((RPCConnection) -> Void)?
    private var framer: LineFramer
    private var pending: [JSONValue: Respond] = [:]
    private var nextID = 1
    /// The last 16 frames, newest in bit 0: 1 for a frame that was not JSON-RPC.
    private var recentFrames: UInt16 = 0

    /// More bad frames than this among the last 16 disconnect the peer.
    static let maximumBadFrames = 8
    /// The most members a batch may have: each may cost a handler call and
    /// a response, and the whole batch is one frame.
    public static let maximumBatchMembers = 128
    public static let maximumWriteQueue = 4 << 20

    /// Monotonic time (ns: no ties) of the last bytes received: the least
    /// recently active peer is the first to go when the server is full.
    public private(set) var lastActivity: UInt64 = 0
    /// Exempt from eviction: an extension that said hello.
    public var isPinned = false
    /// Requests from the peer not answered yet (a push waiting on its
    /// extensions, a token waiting on a refresh): such a peer is busy, not idle.
    public private(set) var unansweredRequests = 0
    /// The most bytes ever queued for this peer: a big one's end is worth
    /// giving memory back for.
    public private(set) var peakQueuedBytes = 0
    /// Bytes of an incomplete frame held for this peer.
    public var bufferedBytes: Int { framer.bufferedCount }
    /// Told after each send, with the bytes now queued: the server's budget.
    var onQueued: ((RPCConnection) -> Void)?

    public init(stream: PipeStream, peer: PeerCredentials? = nil,
                maximumFrameSize: Int = LineFramer.defaultMaximumFrameSize) {
        self.stream = stream
        self.peer = peer
        self.framer = LineFramer(maximumFrameSize: maximumFrameSize)
    }

    /// Starts reading. `onClose` runs once when either side closes.
    public func start(handler: @escaping Handler, onClose: ((RPCConnection) -> Void)? = nil) {
        self.handler = handler
        self.onClose = onClose
        lastActivity = MonotonicClock.nanoseconds()
        do {
            try stream.startReading { [weak self] event in self?.received(event) }
        } catch {
            close()
        }
    }

    /// Calls `method` on the peer. The returned id cancels the call
    /// (`cancel(_:)`): its completion is dropped and a late answer ignored.
    @discardableResult
    public func call(_ method: String, _ params: JSONValue? = nil, _ completion: @escaping Respond) -> JSONValue {
        let id = JSONValue.integer(nextID)
        nextID += 1
        guard !isClosed else {
            completion(.failure(.internalError("connection closed")))
            return id
        }
        pending[id] = completion
        send(.request(id: id, method: method, params: params))
        return id
    }

    /// Forgets the call with `id`: nothing is kept for an answer that may never come.
    public func cancel(_ id: JSONValue) {
        pending.removeValue(forKey: id)
    }

    /// Calls waiting for the peer's answer.
    public var pendingCalls: Int { pending.count }

    /// Bytes queued for this peer and not yet taken by the kernel.
    public var queuedBytes: Int { stream.writeQueueSize }

    public func notify(_ method: String, _ params: JSONValue? = nil) {
        send(.notification(method: method, params: params))
    }

    public func send(_ message: RPCMessage) {
        enqueue(message.encoded())
    }

    private func enqueue(_ frame: [UInt8]) {
        guard !isClosed else { return }
        stream.write(frame)
        let queued = stream.writeQueueSize
        peakQueuedBytes = max(peakQueuedBytes, queued)
        if queued > Self.maximumWriteQueue { return close() }
        onQueued?(self)
    }

    public func close() {
        guard !isClosed else { return }
        isClosed = true
        let waiting = pending
        pending.removeAll()
        handler = nil
        onQueued = nil
        stream.close()
        for (_, respond) in waiting { respond(.failure(.internalError("connection closed"))) }
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
                send(.response(id: .null, result: .failure(.invalidRequest(
                    "frame larger than \(framer.maximumFrameSize) bytes"))))
                close()
                return
            }
            for frame in frames where !isClosed { dispatch(frame) }
            // A large partial frame counts against the server's budget too.
            if !isClosed, framer.bufferedCount >= 64 << 10 { onQueued?(self) }
        case .end, .failed:
            close()
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
            handler?(self, method, params) { _ in }
        case .response(let id, let result):
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
        if garbage, recentFrames.nonzeroBitCount > Self.maximumBadFrames { close() }
    }

    /// Runs a request; `reply` gets its response once, when the handler answers.
    private func handle(id: JSONValue, method: String, params: JSONValue?, reply: @escaping (RPCMessage) -> Void) {
        var answered = false
        unansweredRequests += 1
        handler?(self, method, params) { [weak self] result in
            guard !answered else { return }
            answered = true
            self?.unansweredRequests -= 1
            reply(.response(id: id, result: result))
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

/// Collects a batch's responses in member order and hands them over once
/// every request in it is answered (and the batch has been read through).
private final class BatchReply {
    private var slots: [RPCMessage?]
    private var outstanding = 0
    private var sealed = false
    private var done: (([RPCMessage]) -> Void)?

    init(count: Int, done: @escaping ([RPCMessage]) -> Void) {
        slots = Array(repeating: nil, count: count)
        self.done = done
    }

    func expect() { outstanding += 1 }

    /// A request's response (each request answers once).
    func answer(_ slot: Int, _ response: RPCMessage) {
        slots[slot] = response
        outstanding -= 1
        finishIfComplete()
    }

    /// An invalid member's error.
    func refuse(_ slot: Int, _ response: RPCMessage) {
        slots[slot] = response
    }

    func seal() {
        sealed = true
        finishIfComplete()
    }

    private func finishIfComplete() {
        guard sealed, outstanding == 0, let done else { return }
        self.done = nil
        done(slots.compactMap { $0 })
    }
}
