import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Logging
import TetherAuth
import TetherGroup
import TetherHTTP
import TetherIPC
import TetherLog
import TetherLoop
import TetherManifest

/// Requests on the socket, dispatched by method; tokens through the
/// host's broker.
extension Host {
    func token(_ request: TokenRequest, respond: @escaping (Result<TokenGrant, RPCError>) -> Void) {
        let kind = request.kind.flatMap(TokenKind.init(rawValue:))
        let rejected = request.rejected
        if broker == nil {
            let logger = self.logger
            do {
                // Its requests run on the host's own loop.
                broker = try TokenBroker(group: configuration.group, http: HTTPClient(loop: loop), logger: logger,
                                         onWarning: { logger.warning("\($0)") })
            } catch {
                return respond(.failure(.internalError(error.description)))
            }
        }
        guard let broker else { return }
        let loop = self.loop
        nonisolated(unsafe) let respond = respond  // called on the loop only
        Task(executorPreference: loop.taskExecutor) {
            let result: Result<TokenGrant, RPCError>
            do throws(AuthError) {
                // `rejected`: a server refused that token early; one coordinated refresh.
                let set = try await broker.tokenSet(kind, rejecting: rejected)
                // What the host hands out is redacted from its log at once,
                // before the store's next read (an extension may print it).
                Redactor.shared.register(set.accessToken)
                result = .success(TokenGrant(accessToken: set.accessToken, expiresAt: set.expiry))
            } catch {
                result = .failure(.refused(error.description))
            }
            loop.execute { respond(result) }
        }
    }

    /// What a keyboard without open access may ask: the methods whose
    /// description says `reading` (its role's needs: reading, the openURL
    /// hop, tokens), nothing that reaches another process (a push, a
    /// reload, a defaults notice, an extension started or stopped, a
    /// feature stopped). docs/security.md lists each.
    var readOnlyMethods: Set<String> { router.methods(allowing: .reading) }

    func handle(_ connection: RPCConnection, method: String, params: JSONValue?,
                respond answer: @escaping RPCConnection.Respond) {
        // Every request is counted by method, and by error code if it fails.
        let respond: RPCConnection.Respond = { [metrics] result in
            if case .failure(let error) = result { metrics.request(method, error: error.code) } else { metrics.request(method, error: nil) }
            answer(result)
        }
        // An on-demand extension that asks for something is not idle.
        if let peer = attached[ObjectIdentifier(connection)], peer.managed {
            supervisor(named: peer.name)?.noteActivity()
        }
        guard let route = router.routes[method] else { return respond(.failure(.methodNotFound(method))) }
        // A keyboard without open access passes nothing on (invariant 25):
        // only what reads. Checked for no other method, so the common
        // requests cost nothing per connection.
        if route.access != .reading, let name = readOnlyPeer(connection) {
            return respond(.failure(.refused("'\(name)' has read-only access to the group "
                                             + "(set \"openAccess\": true in its manifest)")))
        }
        route.handle(connection, params, respond)
    }
}
