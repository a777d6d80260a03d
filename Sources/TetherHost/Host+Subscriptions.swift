import TetherGroup
import TetherIPC

/// Events go to the connections that asked for them (`host.subscribe`, or
/// a hello's `events`), never to all: a change costs the host one message
/// per subscriber, and no extension is woken by another's change.
extension Host {
    /// What a connection may subscribe to.
    static let subscribable = Set(HostNotification.subscribable)

    /// {events: [name]} → {events: [every event this connection now hears]}.
    func subscribe(_ connection: RPCConnection, _ subscription: Subscription) -> Result<Subscription, RPCError> {
        let names = subscription.events
        if let unknown = names.first(where: { !Self.subscribable.contains($0) }) {
            return .failure(Subscription.unknownEvent(.string(unknown)))
        }
        let key = ObjectIdentifier(connection)
        for name in names { subscribers[name, default: [:]][key] = connection }
        let hears = Self.subscribable.filter { subscribers[$0]?[key] != nil }.sorted()
        return .success(Subscription(events: hears))
    }

    func unsubscribe(_ connection: RPCConnection) {
        let key = ObjectIdentifier(connection)
        for name in Self.subscribable { subscribers[name]?[key] = nil }
    }

    /// Tells `event` to its subscribers only.
    func publish(_ event: String, _ params: JSONValue) {
        // What becomes of other extensions (their pids, their ends) is the
        // user's to hear, as their status is: an extension hears of itself.
        let about = event == HostNotification.extensionChanged ? params["name"]?.stringValue : nil
        for (key, connection) in subscribers[event] ?? [:] {
            if let about, let listener = links[key]?.name ?? attached[key]?.name, listener != about { continue }
            connection.notify(event, params)
        }
    }

    /// The group's defaults and sign-in, watched once for every launched
    /// widget (`store.changed` to those that asked): a widget the host
    /// launched opens no inotify instance of its own, so a thousand fit in
    /// the user's 128. A change also launches idle on-demand widgets.
    func watchStores() {
        guard supervisors.all.contains(where: { $0.manifest.role == .widget }) else { return }
        let group = configuration.group
        do {
            defaultsWatcher = try StoreWatcher(loop: loop, paths: [group.storePath("defaults")]) { [unowned self] _ in
                self.publish(HostNotification.storeChanged, StoreChange.defaults.json)
                _ = self.launchIdleWidgets(named: nil)
            }
        } catch {
            logger.warning("cannot watch the shared defaults: widgets will not see changes to them, and on-demand widgets will not launch on one (\(error))")
        }
        let secrets = (try? group.preparedSecretsPath()) ?? group.secretsPath
        do {
            credentialsWatcher = try StoreWatcher(loop: loop, paths: [secrets + "/credentials.json"]) { [unowned self] _ in
                self.publish(HostNotification.storeChanged, StoreChange.credentials.json)
            }
        } catch {
            logger.warning("cannot watch the group's sign-in: widgets will not see a sign-in or sign-out (\(error))")
        }
    }
}
