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
/// - at most `limits.maximumConnections` client connections. Pinned ones
///   (an extension's link) are not clients: they never count, and are never
///   closed to make room. When full, the least recently active idle client
///   (no request in flight) makes room for the newcomer: idle clients cannot
///   lock everyone out, and the newest request (`tether status`) is answered;
/// - at most `limits.replyBudget` bytes of replies and input held across
///   every connection, kept as a running total (no message costs a walk of
///   the connections); past it, the clients holding the most are
///   disconnected first. Memory freed that way is handed back to the system;
/// - each connection's work in flight (`RPCConnection`, backpressure).
///
/// The ceiling is set below the descriptor limit (see the host's
/// `DescriptorLimit`), because at EMFILE libuv accepts and closes waiting
/// connections itself, without telling us.
package final class RPCServer: @unchecked Sendable {
    package struct Limits: Sendable {
        package var maximumConnections: Int
        package var replyBudget: Int
        /// Who is at `maximumConnections` when a client is refused or closed
        /// there, and the way out, as the server's users name them.
        package var serverName = "the server"
        package var remedy: String?

        package static let defaultMaximumConnections = 256
        package static let defaultReplyBudget = 16 << 20

        package init(maximumConnections: Int = Limits.defaultMaximumConnections,
                     replyBudget: Int = Limits.defaultReplyBudget) {
            self.maximumConnections = maximumConnections
            self.replyBudget = replyBudget
        }
    }

    package let path: String
    package let loop: EventLoop
    package let limits: Limits
    package private(set) var connections: [ObjectIdentifier: RPCConnection] = [:]
    /// Connections that are pinned (`pin`): the rest are clients.
    package private(set) var pinnedCount = 0
    package var clientCount: Int { connections.count - pinnedCount }
    /// Bytes held for every connection (replies queued, input waiting).
    package private(set) var heldBytes = 0
    private let listener: UnixListener
    /// The socket file is this server's to remove (not a service manager's).
    private let ownsPath: Bool
    private let handler: RPCConnection.Handler
    /// The notification, {reason}, a client closed to make room is sent
    /// first (`RPCConnection.goodbye`); nil: closed without a word.
    package let goodbye: String?
    private var onDisconnect: ((RPCConnection) -> Void)?
    /// Peers refused for running as another user, for tests and status.
    package private(set) var refusedPeers = 0
    /// Connections closed to make room, or for holding too many replies.
    package private(set) var evictedPeers = 0
    private var trimTimer: LoopTimer?
    /// Closed: connections closing now schedule nothing (the timer is gone).
    private var isClosed = false

    /// A peer that held this much is worth giving memory back for at its end.
    static let trimThreshold = 64 << 10

    /// Binds `path`, which must not exist, or serves `adopting`, a socket
    /// already bound there (passed by a service manager, which owns the
    /// file: it is left in place at close). Throws `.fileNameTooLong` for
    /// a path longer than a socket address can hold.
    package init(loop: EventLoop, path: String, adopting: Int32? = nil, limits: Limits = Limits(),
                 goodbye: String? = nil, handler: @escaping RPCConnection.Handler,
                 onDisconnect: ((RPCConnection) -> Void)? = nil) throws(Errno) {
        self.loop = loop
        self.path = path
        self.limits = limits
        self.goodbye = goodbye
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
        if clientCount >= limits.maximumConnections, !evictLeastActive(reason: limitReason) {
            // Every client is busy: the newcomer is refused, and told why.
            refusedPeers += 1
            let refusal = RPCMessage.response(id: .null, result: .failure(.refused(limitReason)))
            stream.write(refusal.encoded()) { _ in stream.close() }
            return
        }
        serve(RPCConnection(stream: stream, peer: peer, goodbye: goodbye))
    }

    private var limitReason: String {
        "\(limits.serverName) is at its limit of \(limits.maximumConnections) client connections"
            + (limits.remedy.map { " (\($0))" } ?? "")
    }

    /// Makes `connection` an extension's: outside the client limit and
    /// never closed to make room.
    package func pin(_ connection: RPCConnection) {
        guard !connection.isPinned, connections[ObjectIdentifier(connection)] != nil else { return }
        connection.isPinned = true
        pinnedCount += 1
    }

    /// Serves the host's end of a `LaunchLink` like an accepted connection,
    /// with `peer` the process it was handed to (the kernel would name the
    /// pair's creator, the host itself). Pinned, and outside the connection
    /// limit: it is the host's own launch's. The server owns `descriptor`
    /// from here on, whether this succeeds or not.
    package func adopt(descriptor: Int32, peer: PeerCredentials) throws(Errno) -> RPCConnection {
        let connection = RPCConnection(stream: try PipeStream.adopting(loop: loop, fileDescriptor: descriptor),
                                       peer: peer, goodbye: goodbye)
        serve(connection)
        pin(connection)
        return connection
    }

    private func serve(_ connection: RPCConnection) {
        connections[ObjectIdentifier(connection)] = connection
        connection.onHeldChanged = { [unowned self] connection in self.account(connection) }
        connection.start(handler: handler) { [weak self] connection in
            guard let self else { return }
            guard self.connections.removeValue(forKey: ObjectIdentifier(connection)) != nil else { return }
            if connection.isPinned { self.pinnedCount -= 1 }
            self.heldBytes -= connection.accountedBytes
            connection.accountedBytes = 0
            if connection.peakQueuedBytes >= Self.trimThreshold { self.scheduleTrim() }
            self.onDisconnect?(connection)
        }
    }

    /// Closes the least recently active client, telling it why; false if
    /// every client has a request in flight. Only when full: the walk is
    /// the price of a connection refused, not of a message.
    private func evictLeastActive(reason: String) -> Bool {
        var victim: RPCConnection?
        for connection in connections.values where !connection.isPinned && connection.unansweredRequests == 0 {
            if victim.map({ connection.lastActivity < $0.lastActivity }) ?? true { victim = connection }
        }
        guard let victim else { return false }
        evictedPeers += 1
        if let goodbye {
            victim.notify(goodbye, ["reason": .string(reason + "; closing the least recently active connection")])
        }
        victim.close()
        return true
    }

    /// Keeps the running total of what is held for every connection; past
    /// the budget, the clients holding the most go first. Never a pinned
    /// one (an extension's, whose launch link cannot be replaced), which its
    /// own bounds limit.
    private func account(_ connection: RPCConnection) {
        let held = connection.queuedBytes + connection.bufferedBytes
        heldBytes += held - connection.accountedBytes
        connection.accountedBytes = held
        guard heldBytes > limits.replyBudget else { return }
        for candidate in connections.values.filter({ !$0.isPinned }).sorted(by: { $0.accountedBytes > $1.accountedBytes }) {
            guard heldBytes > limits.replyBudget else { break }
            evictedPeers += 1
            candidate.close()
        }
    }

    /// glibc keeps freed memory for reuse; after a burst (abuse, a thousand
    /// extensions ending), give it back so the host returns to near its
    /// idle size. Once per second at most.
    package func scheduleTrim() {
        guard !isClosed else { return }
        let timer = trimTimer ?? LoopTimer(loop: loop)
        trimTimer = timer
        guard !timer.isActive else { return }
        timer.unref()
        timer.start(afterMilliseconds: 1_000) { _ = tether_release_free_memory() }
    }

    /// Sends a notification to every connected peer but `skipped`: for
    /// what each must hear once (the host stopping), never per event.
    package func broadcast(_ method: String, _ params: JSONValue? = nil, skipping skipped: Set<ObjectIdentifier> = []) {
        for (key, connection) in connections where !skipped.contains(key) { connection.notify(method, params) }
    }

    /// Stops listening, closes every connection, and removes the socket
    /// file (unless a service manager passed it).
    package func close() {
        isClosed = true
        listener.close()
        trimTimer?.close()
        trimTimer = nil
        onDisconnect = nil
        for connection in connections.values { connection.close() }
        connections.removeAll()
        if ownsPath { unlink(path) }
    }
}
