import ArgumentParser
import FlyingFox
import FlyingSocks
import Foundation

/// A local OAuth 2.0 server that behaves like the strict ones in production:
/// short-lived JWT access tokens, refresh tokens that rotate on every
/// use, and reuse detection that revokes the whole token family (as Auth0,
/// Okta and Keycloak do). Counters and fault injection let tests and
/// `tether demo` check what clients really did.
@main
struct DemoAuthServer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo-auth-server",
        abstract: "A local OAuth token server with rotating refresh tokens, for Tether's demo and tests.",
        discussion: """
            Prints "listening on http://HOST:PORT" once it accepts connections.
            POST /token            grant_type=password | client_credentials | refresh_token | device_code (RFC 8628)
            POST /device_authorization   starts a device login; GET/POST /device is its verification page
            POST /revoke           RFC 7009: revokes a refresh token's family
            GET  /.well-known/oauth-authorization-server, /.well-known/openid-configuration
            GET  /orders[/ID]      needs a valid access token (Bearer)
            GET  /counters         what clients did: refreshes, reuseDetected, rejections, ...
            POST /admin/faults     {"status":503,"count":2} or {"latencyMs":500,"latencyCount":1} or {"slowDownCount":1}
            POST /admin/settings   {"accessTTL":S,"reuseGrace":S,"ordersLatencyMs":MS,"deviceInterval":S,
                                    "deviceExpiresIn":S,"oauthMetadata":0|1}
            POST /admin/reject-access   refuse every access token issued so far (refresh tokens stay valid)
            POST /admin/revoke     revoke every token family
            Secrets are read from files, never from arguments.
            """
    )

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on; 0 picks a free one.")
    var port = 0

    @Option(help: "Seconds an access token is valid.")
    var accessTTL: Double = 30

    @Option(help: "Seconds during which a just-rotated refresh token is still accepted (0: never).")
    var reuseGrace: Double = 0

    @Option(help: "The client id.")
    var clientID = "tether-demo"

    @Option(help: "A file holding the client secret (without it the client is public).")
    var clientSecretFile: String?

    @Option(help: "A file of 'user:password' lines.")
    var usersFile: String?

    func run() async throws {
        signal(SIGPIPE, SIG_IGN)  // a closed stdout is EPIPE for say(), not the server's death
        let secret = try clientSecretFile.map { try Self.readSecret($0) }
        var users: [String: String] = [:]
        if let usersFile {
            for line in try Self.readSecret(usersFile).split(whereSeparator: \.isNewline) {
                guard let colon = line.firstIndex(of: ":") else { continue }
                users[String(line[..<colon])] = String(line[line.index(after: colon)...])
            }
        }
        let authority = await Authority(
            settings: .init(accessTTL: accessTTL, reuseGrace: reuseGrace),
            clientID: clientID, clientSecret: secret, users: users)
        // A handler may take as long as a client waits (30 s by default),
        // and injected latency up to 60 s: FlyingFox's 15 s default would
        // answer an empty 500 after a grant took effect.
        let server = HTTPServer(address: try Self.address(host, port: port), timeout: 120, logger: .disabled)
        await Routes.install(on: server, authority)
        // The server's end (a failed bind, at once) or its first listening,
        // whichever comes first: a taken port is an error now, not in 30 s.
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask { try await server.run(); return true }
            group.addTask { try await server.waitUntilListening(timeout: 30); return false }
            while let ended = try await group.next(), !ended {
                switch await server.listeningAddress {
                case .ip4(_, let port)?, .ip6(_, let port)?:
                    Self.noDelay(onListenerAt: port)
                    say("listening on http://\(host):\(port)")
                default: say("listening on http://\(host)")
                }
            }
        }
    }

    /// An IPv4 or IPv6 address (or localhost) to listen on.
    static func address(_ host: String, port: Int) throws -> any SocketAddress {
        guard let port = UInt16(exactly: port) else { throw ValidationError("--port must be between 0 and 65535") }
        if host == "localhost" { return try sockaddr_in.inet(ip4: "127.0.0.1", port: port) }
        if let address = try? sockaddr_in.inet(ip4: host, port: port) { return address }
        if let address = try? sockaddr_in6.inet6(ip6: host, port: port) { return address }
        throw ValidationError("--host must be an IPv4 or IPv6 address, or localhost (not \(host))")
    }

    /// TCP_NODELAY on the listening socket, which the connections it
    /// accepts inherit (Linux): FlyingFox writes a response's head and body
    /// apart and sets no option, so on a reused connection the body waited
    /// for the client's delayed ACK (40 ms a request). Before the
    /// listening line: no client connects earlier.
    static func noDelay(onListenerAt port: UInt16) {
        for fd in 0..<min(getdtablesize(), 1_024) {
            var address = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let named = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            guard named == 0 else { continue }
            let boundPort: UInt16
            switch Int32(address.ss_family) {
            // sin_port and sin6_port: both at offset 2, in network order.
            case AF_INET, AF_INET6: boundPort = withUnsafeBytes(of: &address) { UInt16(bigEndian: $0.load(fromByteOffset: 2, as: UInt16.self)) }
            default: continue
            }
            var listening: Int32 = 0
            var size = socklen_t(MemoryLayout<Int32>.size)
            guard boundPort == port, getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &size) == 0, listening == 1 else { continue }
            var on: Int32 = 1
            _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        }
    }

    static func readSecret(_ path: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ValidationError("cannot read \(path)")
        }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// One line on stdout, at once: tests wait for these lines. A closed or
/// gone reader loses the line (EPIPE, with SIGPIPE ignored), never the
/// server: FileHandle.write would trap.
func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    var written = 0
    while written < bytes.count {
        let count = bytes[written...].withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { return }
        written += count
    }
}
