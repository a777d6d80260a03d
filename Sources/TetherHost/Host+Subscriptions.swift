import TetherGroup
import TetherIPC

/// Events go to the connections that asked for them (`SubscriberTable`);
/// the store watchers whose changes are events.
extension Host {
    /// {events: [name]} → {events: [every event this connection now hears]}.
    func subscribe(_ connection: RPCConnection, _ subscription: Subscription) -> Result<Subscription, RPCError> {
        subscribers.subscribe(connection, to: subscription.events).map(Subscription.init(events:))
    }

    /// Tells `event` to its subscribers only; of an extension's change
    /// (its pid, its end), an extension hears of itself alone.
    func publish(_ event: String, _ params: JSONValue) {
        let about = event == HostNotification.extensionChanged ? params["name"]?.stringValue : nil
        for connection in subscribers.listeners(of: event, about: about, extensionName: { links[$0]?.name ?? attached[$0]?.name }) {
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
