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
    func token(_ params: JSONValue?, respond: @escaping RPCConnection.Respond) {
        let request = TokenRequest(params: params)
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
            let result: Result<JSONValue, RPCError>
            do throws(AuthError) {
                // `rejected`: a server refused that token early; one coordinated refresh.
                let set = try await broker.tokenSet(kind, rejecting: rejected)
                result = .success(TokenGrant(accessToken: set.accessToken, expiresAt: set.expiry).json)
            } catch {
                result = .failure(.refused(error.description))
            }
            loop.execute { respond(result) }
        }
    }

    /// What a keyboard without open access may ask: what its role needs
    /// (reading, the openURL hop, tokens), nothing that reaches another
    /// process (a push, a reload, a defaults notice, an extension started
    /// or stopped, a feature stopped). docs/security.md lists each.
    static let readOnlyMethods: Set<String> = [
        HostMethod.ping, HostMethod.status, HostMethod.hello, HostMethod.featureStart, HostMethod.featureList,
        HostMethod.extensionList, HostMethod.tokenGet, HostMethod.metrics, HostMethod.subscribe,
    ]

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
        // A keyboard without open access passes nothing on (invariant 25):
        // only its allowlist. Checked for no other method, so the common
        // requests cost nothing per connection.
        if !Self.readOnlyMethods.contains(method), let name = readOnlyPeer(connection) {
            return respond(.failure(.refused("'\(name)' has read-only access to the group "
                                             + "(set \"openAccess\": true in its manifest)")))
        }
        switch method {
        case HostMethod.ping:
            respond(.success(["pid": .integer(pid)]))
        case HostMethod.status:
            // An extension sees its own status; the others' (their exits)
            // are the user's to read.
            var answer = status()
            if let name = extensionPeer(connection) { answer.extensions.removeAll { $0.name != name } }
            respond(.success(answer.json))
        case HostMethod.featureStart:
            respond(startFeature(params, by: extensionPeer(connection)))
        case HostMethod.featureStop:
            // An extension, launched or by hand, stops only what it started.
            if let name = extensionPeer(connection), let feature = params?["name"]?.stringValue,
               featureStarters[feature]?.name != name {
                return respond(.failure(.refused("'\(name)' may stop only a feature it started; it did not start '\(feature)'")))
            }
            respond(featureName(params).flatMap(stopFeature))
        case HostMethod.featureList:
            respond(.success(featureList()))
        case HostMethod.hello:
            respond(hello(connection, params))
        case HostMethod.push:
            push(from: connection, params, respond: respond)
        case HostMethod.reload:
            respond(reload(params))
        case HostMethod.tokenGet:
            token(params, respond: respond)
        case HostMethod.defaultsChanged:
            let change = DefaultsChange(params: params).json
            var notified = 0
            for peer in attached.values where peer.connection !== connection {
                peer.connection.notify(HostNotification.defaultsChanged, change)
                supervisor(named: peer.name)?.noteActivity()
                notified += 1
            }
            // An idle on-demand widget shows the new defaults: launch it.
            let launched = launchIdleWidgets(named: nil)
            respond(.success(["notified": .integer(notified), "launched": .array(launched.map { .string($0) })]))
        case HostMethod.extensionStart:
            startExtension(params, respond: respond)
        case HostMethod.extensionStop:
            // No extension ends another, launched or by hand: the user does.
            if let name = extensionPeer(connection) {
                return respond(.failure(.refused("'\(name)' is an extension; only the user stops extensions (tether extension stop)")))
            }
            stopExtension(params, respond: respond)
        case HostMethod.extensionList:
            let viewer = extensionPeer(connection)
            respond(.success(.array(extensionList().filter { viewer == nil || $0.name == viewer }.map(\.json))))
        case HostMethod.subscribe:
            respond(subscribe(connection, params))
        case HostMethod.widgetEntry:
            respond(widgetEntry(from: connection, params))
        case HostMethod.widgetWatch:
            respond(watchWidget(connection, params))
        case HostMethod.metrics:
            // Every extension's counters: the user's to read, as status is.
            if let name = extensionPeer(connection) {
                return respond(.failure(.refused("'\(name)' is an extension; the host's metrics are the user's to read (tether metrics)")))
            }
            respond(.success(["contentType": "text/plain; version=0.0.4", "text": .string(metricsText())]))
        default:
            respond(.failure(.methodNotFound(method)))
        }
    }
}
