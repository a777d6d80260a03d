import CTetherSystem
import SystemPackage
import TetherLoop
#if canImport(Glibc)
import Glibc
#endif

/// A JSON-RPC server on a Unix socket: mode 0600, and peers running as
/// another user are disconnected on accept (`SO_PEERCRED`).
///
/// Ceilings, so no peer is served at the cost of the others:
/// - at most `limits.maximumConnections` connections. When full, the least
///   recently active idle connection (not an extension's, no request in
///   flight) makes room for the newcomer: idle connections cannot lock
///   everyone out, and the newest request (`tether status`) is answered;
/// - at most `limits.replyBudget` bytes of replies and partial frames held
///   across every connection; past it, the peers holding the most are
///   disconnected first. Memory freed that way is handed back to the system.
///
/// The ceiling is set below the descriptor limit (see the host's
/// `DescriptorLimit`), because at EMFILE libuv accepts and closes waiting
/// connections itself, without telling us.
public final class RPCServer: @unchecked Sendable {
    public struct Limits: Sendable {
        public var maximumConnections: Int
        public var replyBudget: Int

        public static let defaultMaximumConnections = 256
        public static let defaultReplyBudget = 16 << 20

        public init(maximumConnections: Int = Limits.defaultMaximumConnections,
                    replyBudget: Int = Limits.defaultReplyBudget) {
            self.maximumConnections = maximumConnections
            self.replyBudget = replyBudget
        }
    }

    public let path: String
    public let loop: EventLoop
    public let limits: Limits
    public private(set) var connections: [ObjectIdentifier: RPCConnection] = [:]
    private let listener: UnixListener
    /// The socket file is this server's to remove (not a service manager's).
    private let ownsPath: Bool
    private let handler: RPCConnection.Handler
    private var onDisconnect: ((RPCConnection) -> Void)?
    /// Peers refused for running as another user, for tests and status.
    public private(set) var refusedPeers = 0
    /// Connections closed to make room, or for holding too many replies.
    public private(set) var evictedPeers = 0
    private var trimTimer: LoopTimer?

    /// Queues below this are not worth adding up on every send.
    static let budgetCheckThreshold = 64 << 10

    /// Binds `path`, which must not exist, or serves `adopting`, a socket
    /// already bound there (passed by a service manager, which owns the
    /// file: it is left in place at close). Throws `.fileNameTooLong` for
    /// a path longer than a socket address can hold.
    public init(loop: EventLoop, path: String, adopting: Int32? = nil, limits: Limits = Limits(),
                handler: @escaping RPCConnection.Handler,
                onDisconnect: ((RPCConnection) -> Void)? = nil) throws(Errno) {
        self.loop = loop
        self.path = path
        self.limits = limits
        self.handler = handler
        self.onDisconnect = onDisconnect
        ownsPath = adopting == nil
        listener = UnixListener(loop: loop)
        do throws(Errno) {
            if let adopting {
                try listener.adopt(fileDescriptor: adopting)
            } else {
                try listener.bind(path: path)
                // Only the owner may connect; the group directory is 0700 too.
                guard chmod(path, 0o600) == 0 else { throw Errno(rawValue: errno) }
            }
            try listener.listen(backlog: 512) { [weak self] result in
                guard let self else { return }
                switch result {
                case .success(let stream):
                    self.accept(stream)
                case .failure(let error) where error == .tooManyOpenFiles || error == .tooManyOpenFilesInSystem:
                    // Rare (libuv drops connections at EMFILE itself): free a
                    // descriptor for the next one.
                    _ = self.evictLeastActive(reason: "the host is out of file descriptors")
                case .failure:
                    break
                }
            }
        } catch {
            listener.close()
            throw error
        }
    }

    private func accept(_ stream: PipeStream) {
        let peer = stream.fileDescriptor.flatMap { PeerCredentials.of(socket: $0) }
        guard let peer, peer.uid == geteuid() else {
            refusedPeers += 1
            stream.close()
            return
        }
        if connections.count >= limits.maximumConnections,
           !evictLeastActive(reason: "the host is at its limit of \(limits.maximumConnections) connections") {
            // Every connection is an extension's or busy: the newcomer is refused.
            refusedPeers += 1
            let refusal = RPCMessage.response(id: .null, result: .failure(.refused(
                "the host is at its limit of \(limits.maximumConnections) connections")))
            stream.write(refusal.encoded()) { _ in stream.close() }
            return
        }
        serve(RPCConnection(stream: stream, peer: peer))
    }

    /// Serves the host's end of a `LaunchLink` like an accepted connection,
    /// with `peer` the process it was handed to (the kernel would name the
    /// pair's creator, the host itself). Pinned, and outside the connection
    /// limit: it is the host's own launch's. The server owns `descriptor`
    /// from here on, whether this succeeds or not.
    public func adopt(descriptor: Int32, peer: PeerCredentials) throws(Errno) -> RPCConnection {
        let connection = RPCConnection(stream: try PipeStream.adopting(loop: loop, fileDescriptor: descriptor), peer: peer)
        connection.isPinned = true
        serve(connection)
        return connection
    }

    private func serve(_ connection: RPCConnection) {
        connections[ObjectIdentifier(connection)] = connection
        connection.onQueued = { [unowned self] connection in self.checkBudget(after: connection) }
        connection.start(handler: handler) { [weak self] connection in
            guard let self else { return }
            self.connections.removeValue(forKey: ObjectIdentifier(connection))
            if connection.peakQueuedBytes >= Self.budgetCheckThreshold { self.scheduleTrim() }
            self.onDisconnect?(connection)
        }
    }

    /// Closes the least recently active connection that is not pinned,
    /// telling it why; false if every connection is pinned.
    private func evictLeastActive(reason: String) -> Bool {
        let idle = connections.values.filter { !$0.isPinned && $0.unansweredRequests == 0 }
        guard let victim = idle.min(by: { $0.lastActivity < $1.lastActivity }) else { return false }
        evict(victim, reason: reason + "; closing the least recently active connection")
        return true
    }

    private func evict(_ connection: RPCConnection, reason: String) {
        evictedPeers += 1
        connection.notify("host.disconnecting", ["reason": .string(reason)])
        connection.close()
    }

    /// Past the reply budget, the peers holding the most unread replies go
    /// first; never a pinned one (an extension's, whose launch link cannot
    /// be replaced), which its own queue's ceiling bounds.
    private func checkBudget(after connection: RPCConnection) {
        func held(_ connection: RPCConnection) -> Int { connection.queuedBytes + connection.bufferedBytes }
        guard held(connection) >= Self.budgetCheckThreshold else { return }
        var total = connections.values.reduce(0) { $0 + held($1) }
        guard total > limits.replyBudget else { return }
        for candidate in connections.values.filter({ !$0.isPinned }).sorted(by: { held($0) > held($1) }) {
            guard total > limits.replyBudget else { break }
            total -= held(candidate)
            evictedPeers += 1
            candidate.close()
        }
    }

    /// glibc keeps freed memory for reuse; after a burst of abuse, give it
    /// back so the host returns to near its idle size. Once per second at most.
    private func scheduleTrim() {
        let timer = trimTimer ?? LoopTimer(loop: loop)
        trimTimer = timer
        guard !timer.isActive else { return }
        timer.unref()
        timer.start(afterMilliseconds: 1_000) { _ = tether_release_free_memory() }
    }

    /// Sends a notification to every connected peer.
    public func broadcast(_ method: String, _ params: JSONValue? = nil) {
        for connection in connections.values { connection.notify(method, params) }
    }

    /// Stops listening, closes every connection, and removes the socket
    /// file (unless a service manager passed it).
    public func close() {
        listener.close()
        trimTimer?.close()
        onDisconnect = nil
        for connection in connections.values { connection.close() }
        connections.removeAll()
        if ownsPath { unlink(path) }
    }
}
