import TetherGroup
import TetherIPC
import TetherJSON

/// Every request the host answers, one handler per method's description
/// (`HostMethods`): the router reads the parameters and writes the answers;
/// what only the user may do is refused to extensions here, with why.
extension Host {
    func makeRouter() -> HostRouter<RPCConnection> {
        var router = HostRouter<RPCConnection>()
        router.on(HostMethods.ping) { [unowned self] _, _, respond in respond(.success(PingAnswer(pid: Int64(pid)))) }
        router.on(HostMethods.status) { [unowned self] connection, request, respond in
            // An extension sees its own status; the others' (their exits)
            // are the user's to read.
            respond(.success(status(limit: request.limit, only: extensionPeer(connection))))
        }
        router.on(HostMethods.featureStart) { [unowned self] connection, target, respond in
            respond(startFeature(target, by: extensionPeer(connection)))
        }
        router.on(HostMethods.featureStop) { [unowned self] connection, target, respond in
            // An extension, launched or by hand, stops only what it started.
            let (answer, change) = features.stop(target, by: extensionPeer(connection))
            if let change { applyFeatureChange(change) }
            respond(answer)
        }
        router.on(HostMethods.featureList) { [unowned self] _, _, respond in respond(.success(features.list())) }
        router.on(HostMethods.hello, decode: { (wire: JSONValue?) throws(RPCError) in
            try ExtensionHello(params: wire, isValidName: FeatureName.isValid)
        }) { [unowned self] connection, hello, respond in respond(self.hello(connection, hello)) }
        router.on(HostMethods.push) { [unowned self] connection, request, respond in
            push(from: connection, request, respond: respond)
        }
        router.on(HostMethods.reload) { [unowned self] _, request, respond in respond(reload(request)) }
        router.on(HostMethods.tokenGet) { [unowned self] _, request, respond in token(request, respond: respond) }
        router.on(HostMethods.defaultsChanged) { [unowned self] connection, change, respond in
            var notified = 0
            for peer in attached.all where peer.connection !== connection {
                peer.connection.notify(HostNotification.defaultsChanged, change.json)
                supervisor(named: peer.name)?.noteActivity()
                notified += 1
            }
            // An idle on-demand widget shows the new defaults: launch it.
            let launched = launchIdleWidgets(named: nil)
            respond(.success(DefaultsRelayed(notified: notified, launched: launched)))
        }
        router.on(HostMethods.extensionStart) { [unowned self] _, target, respond in
            startExtension(target, respond: respond)
        }
        router.on(HostMethods.extensionStop) { [unowned self] connection, target, respond in
            // No extension ends another, launched or by hand: the user does.
            if let name = extensionPeer(connection) {
                return respond(.failure(.refused("'\(name)' is an extension; only the user stops extensions (tether extension stop)")))
            }
            stopExtension(target, respond: respond)
        }
        router.on(HostMethods.extensionList) { [unowned self] connection, _, respond in
            let viewer = extensionPeer(connection)
            respond(.success(ExtensionListing(extensionList(only: viewer).list)))
        }
        router.on(HostMethods.subscribe) { [unowned self] connection, subscription, respond in
            respond(subscribe(connection, subscription))
        }
        router.on(HostMethods.widgetEntry) { [unowned self] connection, entry, respond in
            respond(widgetEntry(from: connection, entry).map { _ in NoFields() })
        }
        router.on(HostMethods.widgetWatch) { [unowned self] connection, request, respond in
            respond(watchWidget(connection, request))
        }
        router.on(HostMethods.metrics) { [unowned self] connection, _, respond in
            // Every extension's counters: the user's to read, as status is.
            if let name = extensionPeer(connection) {
                return respond(.failure(.refused("'\(name)' is an extension; the host's metrics are the user's to read (tether metrics)")))
            }
            respond(.success(MetricsAnswer(text: metricsText())))
        }
        return router
    }
}
