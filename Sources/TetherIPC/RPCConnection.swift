import TetherLoop

/// A JSON-RPC 2.0 peer over a stream: newline-delimited frames, bounded in
/// size; calls in both directions, matched by id. Lives on its loop.
///
/// Bad input never stalls or crashes the loop: a frame that is not JSON-RPC
/// gets an error response; a peer that keeps sending garbage, sends an
/// oversized frame, or stops reading its responses is disconnected.
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
    private var consecutiveErrors = 0

    static let maximumConsecutiveErrors = 8
    static let maximumWriteQueue = 4 << 20

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
        do {
            try stream.startReading { [weak self] event in self?.received(event) }
        } catch {
            close()
        }
    }

    public func call(_ method: String, _ params: JSONValue? = nil, _ completion: @escaping Respond) {
        guard !isClosed else { return completion(.failure(.internalError("connection closed"))) }
        let id = JSONValue.number(Double(nextID))
        nextID += 1
        pending[id] = completion
        send(.request(id: id, method: method, params: params))
    }

    public func notify(_ method: String, _ params: JSONValue? = nil) {
        send(.notification(method: method, params: params))
    }

    public func send(_ message: RPCMessage) {
        guard !isClosed else { return }
        stream.write(message.encoded())
        if stream.writeQueueSize > Self.maximumWriteQueue { close() }
    }

    public func close() {
        guard !isClosed else { return }
        isClosed = true
        let waiting = pending
        pending.removeAll()
        handler = nil
        stream.close()
        for (_, respond) in waiting { respond(.failure(.internalError("connection closed"))) }
        let onClose = self.onClose
        self.onClose = nil
        onClose?(self)
    }

    private func received(_ event: PipeStream.ReadEvent) {
        switch event {
        case .data(let bytes):
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
        case .end, .failed:
            close()
        }
    }

    private func dispatch(_ frame: [UInt8]) {
        let message: RPCMessage
        do {
            message = try RPCMessage.parse(frame)
        } catch {
            consecutiveErrors += 1
            send(.response(id: .null, result: .failure(error)))
            if consecutiveErrors >= Self.maximumConsecutiveErrors { close() }
            return
        }
        consecutiveErrors = 0
        switch message {
        case .request(let id, let method, let params):
            var answered = false
            handler?(self, method, params) { [weak self] result in
                guard !answered else { return }
                answered = true
                self?.send(.response(id: id, result: result))
            }
        case .notification(let method, let params):
            handler?(self, method, params) { _ in }
        case .response(let id, let result):
            pending.removeValue(forKey: id)?(result)
        }
    }
}

