import SystemPackage
import TetherLoop
#if canImport(Glibc)
import Glibc
#endif

/// A JSON-RPC server on a Unix socket: mode 0600, and peers running as
/// another user are disconnected on accept (`SO_PEERCRED`).
public final class RPCServer: @unchecked Sendable {
    public let path: String
    public let loop: EventLoop
    public private(set) var connections: [ObjectIdentifier: RPCConnection] = [:]
    private let listener: UnixListener
    private let handler: RPCConnection.Handler
    private var onDisconnect: ((RPCConnection) -> Void)?
    /// Peers refused for running as another user, for tests and status.
    public private(set) var refusedPeers = 0

    /// Binds `path`, which must not exist. Throws `.fileNameTooLong` for a
    /// path longer than a socket address can hold.
    public init(loop: EventLoop, path: String, handler: @escaping RPCConnection.Handler,
                onDisconnect: ((RPCConnection) -> Void)? = nil) throws(Errno) {
        self.loop = loop
        self.path = path
        self.handler = handler
        self.onDisconnect = onDisconnect
        listener = UnixListener(loop: loop)
        do throws(Errno) {
            try listener.bind(path: path)
            // Only the owner may connect; the group directory is 0700 too.
            guard chmod(path, 0o600) == 0 else { throw Errno(rawValue: errno) }
            try listener.listen { [weak self] result in
                guard let self, case .success(let stream) = result else { return }
                self.accept(stream)
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
        let connection = RPCConnection(stream: stream, peer: peer)
        connections[ObjectIdentifier(connection)] = connection
        connection.start(handler: handler) { [weak self] connection in
            self?.connections.removeValue(forKey: ObjectIdentifier(connection))
            self?.onDisconnect?(connection)
        }
    }

    /// Sends a notification to every connected peer.
    public func broadcast(_ method: String, _ params: JSONValue? = nil) {
        for connection in connections.values { connection.notify(method, params) }
    }

    /// Stops listening, closes every connection, and removes the socket file.
    public func close() {
        listener.close()
        onDisconnect = nil
        for connection in connections.values { connection.close() }
        connections.removeAll()
        unlink(path)
    }
}
