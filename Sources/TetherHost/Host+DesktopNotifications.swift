import TetherBus
import TetherIPC
import TetherJSON
import TetherLoop

/// Delivered pushes on the desktop: shown through the session bus's
/// notification server when one answers, with their closes and actions
/// told to subscribers. Without a bus or a server a push goes as before,
/// and `status` says why nothing is shown.
extension Host {
    /// Connects to the session bus when showing is on and there is one.
    func startDesktopNotifications() {
        guard configuration.desktopNotifications else { return }
        switch SessionBusAddress.resolve() {
        case .failure(let noBus):
            // No desktop session, as on a server: nothing worth a line.
            desktopUnavailable = DesktopNotificationsStatus(state: .noSessionBus, reason: noBus.reason)
            logger.debug("\(desktopUnavailable.text)")
        case .success(let address):
            let logger = self.logger
            desktop = DesktopNotifier(loop: loop, address: address, onStatus: { status in
                // Settled states only: what `tether status` then says.
                if status.state != .connecting { logger.info("\(status.text)") }
            }, onSignal: { [unowned self] signal in self.desktopSignal(signal) })
        }
    }

    var desktopStatus: DesktopNotificationsStatus {
        guard configuration.desktopNotifications else { return DesktopNotificationsStatus(state: .off) }
        return desktop?.status ?? desktopUnavailable
    }

    func stopDesktopNotifications() {
        for timer in desktopPaceTimers.values { timer.close() }
        desktopPaceTimers = [:]
        desktop?.close()
        desktop = nil
    }

    /// Shows what `answer` (`push.send`'s) delivered, then answers with it
    /// and `desktop`: how it went there. The content shown is the first
    /// rewritten one, else the first delivered. `pusher`: the extension
    /// that pushed, whose pace it keeps (nil: the user, as sent).
    func showDelivered(_ answer: PushAnswer, pushedBy pusher: String?, respond: @escaping PushDelivery.Respond) {
        func answered(_ display: DesktopDisplay) {
            var answer = answer
            answer.desktop = display
            respond(.success(answer))
        }
        let deliveries = answer.delivered
        guard let desktop, configuration.desktopNotifications else {
            return answered(DesktopDisplay(reason: desktopStatus.whyNotShown ?? desktopStatus.summary))
        }
        guard let chosen = deliveries.first(where: \.modified) ?? deliveries.first, let content = chosen.content else {
            return answered(DesktopDisplay(reason: "nothing was delivered"))
        }
        if let name = chosen.extensionName, supervisor(named: name)?.manifest.showOnDesktop == false {
            return answered(DesktopDisplay(reason: "the manifest of '\(name)' says \"showOnDesktop\": false"))
        }
        let notification: DesktopNotification
        do throws(RPCError) {
            notification = try DesktopNotification(payload: content)
        } catch {
            // Only a rewrite can get here: the pushed payload was checked on arrival.
            logger.warning("push: the content '\(chosen.extensionName ?? "")' delivered is not shown on the desktop: \(error.message)")
            return answered(DesktopDisplay(reason: "the delivered content: \(error.message)"))
        }
        guard notification.showOnDesktop else {
            return answered(DesktopDisplay(reason: "the payload says \"showOnDesktop\": false"))
        }
        guard !notification.title.isEmpty || !notification.body.isEmpty else {
            return answered(DesktopDisplay(reason: "it has no title or body to show"))
        }
        if let pusher {
            switch desktopPace.admit(pusher, notification, now: loop.now) {
            case .show:
                break
            case .coalesced(let flushAfter):
                if let flushAfter { showSummary(of: pusher, after: flushAfter) }
                return answered(DesktopDisplay(reason: """
                    coalesced: '\(pusher)' pushed more than \(DesktopPace.burst) at a pace over one every \
                    \(DesktopPace.intervalMilliseconds / 1_000) s; the latest is shown in one summary when its turn comes
                    """))
            }
        }
        desktop.show(notification, appName: appName, replacing: notificationIdentities.serverID(for: notification.id)) {
            [unowned self] result in
            switch result {
            case .success(let server):
                self.notificationIdentities.record(server, id: notification.id)
                answered(DesktopDisplay(notification: server))
            case .failure(let refusal):
                answered(DesktopDisplay(reason: refusal.reason))
            }
        }
    }

    /// The group's name, as the desktop shows who a notification is from.
    var appName: String { configuration.group.path.split(separator: "/").last.map(String.init) ?? "tether" }

    /// What `pusher` pushed faster than its pace, shown as one summary when
    /// its turn comes: the latest, and how many more came with it.
    private func showSummary(of pusher: String, after milliseconds: UInt64) {
        let timer = desktopPaceTimers[pusher] ?? LoopTimer(loop: loop)
        desktopPaceTimers[pusher] = timer
        timer.start(afterMilliseconds: milliseconds) { [unowned self] in
            switch desktopPace.due(pusher, now: loop.now) {
            case .failure(let wait):
                guard let milliseconds = wait.milliseconds else {
                    desktopPaceTimers.removeValue(forKey: pusher)?.close()
                    return
                }
                showSummary(of: pusher, after: milliseconds)
            case .success(let (held, count, replacing)):
                desktopPaceTimers.removeValue(forKey: pusher)?.close()
                guard let desktop else { return }
                let summary = count == 1 ? held : DesktopNotification(
                    title: held.title, body: held.body + (held.body.isEmpty ? "" : "\n")
                        + "(and \(count - 1) more from \(pusher), coalesced)")
                let replaced = count == 1 ? notificationIdentities.serverID(for: held.id) : replacing ?? 0
                desktop.show(summary, appName: appName, replacing: replaced) { [unowned self] result in
                    guard case .success(let server) = result else { return }
                    if count == 1 { notificationIdentities.record(server, id: held.id) } else { desktopPace.summaryShown(pusher, as: server) }
                }
            }
        }
    }

    /// A close or an action of one of the host's notifications, to subscribers.
    private func desktopSignal(_ signal: DesktopNotifier.Signal) {
        let event: DesktopNotificationEvent
        switch signal {
        case .closed(let server, let reason):
            // Another application's (a server that broadcasts), or forgotten.
            guard let id = notificationIdentities.known(server) else { return }
            notificationIdentities.forget(server)
            event = DesktopNotificationEvent(notification: server, id: id, reason: reason)
        case .action(let server, let key):
            guard let id = notificationIdentities.known(server) else { return }
            event = DesktopNotificationEvent(notification: server, id: id, action: key)
        }
        publish(event.event, event.json)
    }
}
