import Logging
import TetherBus
import TetherIPC
import TetherJSON
import TetherLoop

/// What the desktop is shown of delivered pushes: through the session
/// bus's notification server when one answers, each extension at its pace
/// (`DesktopPace`, its summaries on timers of their own), with the
/// server's ids of the host's notifications (`NotificationIdentities`) so
/// their closes and actions reach subscribers (`onEvent`). Without a bus
/// or a server a push goes as before, and `status` says why nothing is
/// shown. One owner, below the host: it is told what to show and answers
/// how it went there.
final class DesktopBoard {
    private let loop: EventLoop
    private let logger: Logger
    /// Showing is on (`--no-desktop-notifications`: off).
    private let enabled: Bool
    /// Who a notification is from, as the desktop shows it: the group's name.
    private let appName: String
    /// The desktop's notification server, when there is a session bus.
    private var notifier: DesktopNotifier?
    /// Why nothing is shown, without a bus.
    private var unavailable = DesktopNotificationsStatus(state: .noSessionBus)
    private var identities = NotificationIdentities()
    /// One more each time the server goes: an answer from the one before
    /// (replaced while a call was on its way) is not recorded as the new one's.
    private var serverGeneration = 0
    /// Each extension's pace on the desktop, and the timers of its summaries.
    private var pace = DesktopPace()
    private var paceTimers: [String: LoopTimer] = [:]
    /// A close or an action of one of the host's notifications, for its subscribers.
    var onEvent: ((DesktopNotificationEvent) -> Void)?

    init(loop: EventLoop, logger: Logger, enabled: Bool, groupPath: String) {
        self.loop = loop
        self.logger = logger
        self.enabled = enabled
        appName = groupPath.split(separator: "/").last.map(String.init) ?? "tether"
    }

    /// Connects to the session bus (the environment's, unless given) when
    /// showing is on and there is one.
    func start(bus: Result<String, SessionBusAddress.NoBus>? = nil) {
        guard enabled else { return }
        switch bus ?? SessionBusAddress.resolve() {
        case .failure(let noBus):
            // No desktop session, as on a server: nothing worth a line.
            unavailable = DesktopNotificationsStatus(state: .noSessionBus, reason: noBus.reason)
            logger.debug("\(unavailable.text)")
        case .success(let address):
            let logger = self.logger
            notifier = DesktopNotifier(loop: loop, address: address, onStatus: { status in
                // Settled states only: what `tether status` then says.
                if status.state != .connecting { logger.info("\(status.text)") }
            }, onSignal: { [unowned self] signal in self.signal(signal) })
        }
    }

    var status: DesktopNotificationsStatus {
        guard enabled else { return DesktopNotificationsStatus(state: .off) }
        return notifier?.status ?? unavailable
    }

    func close() {
        for timer in paceTimers.values { timer.close() }
        paceTimers = [:]
        notifier?.close()
        notifier = nil
    }

    /// Shows what a push delivered, then answers how it went there. The
    /// content shown is the first rewritten one, else the first delivered.
    /// `pusher`: the extension that pushed, whose pace it keeps (nil: the
    /// user, as sent); `hiddenBy`: whether an extension's manifest keeps
    /// what it delivered off the desktop.
    func show(_ deliveries: [DeliveredPush], pushedBy pusher: String?, hiddenBy: (String) -> Bool,
              answered: @escaping (DesktopDisplay) -> Void) {
        // There is a notifier only when showing is on.
        guard let notifier else {
            return answered(DesktopDisplay(reason: status.whyNotShown ?? status.summary))
        }
        guard let chosen = deliveries.first(where: \.modified) ?? deliveries.first, let content = chosen.content else {
            return answered(DesktopDisplay(reason: "nothing was delivered"))
        }
        if let name = chosen.extensionName, hiddenBy(name) {
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
            switch pace.admit(pusher, notification, now: loop.now) {
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
        let generation = serverGeneration
        notifier.show(notification, appName: appName, replacing: identities.serverID(for: notification.id)) {
            [unowned self] result in
            switch result {
            case .success(let server):
                if generation == self.serverGeneration { self.identities.record(server, id: notification.id) }
                answered(DesktopDisplay(notification: server))
            case .failure(let refusal):
                answered(DesktopDisplay(reason: refusal.reason))
            }
        }
    }

    /// What `pusher` pushed faster than its pace, shown as one summary when
    /// its turn comes: the latest, and how many more came with it.
    private func showSummary(of pusher: String, after milliseconds: UInt64) {
        let timer = paceTimers[pusher] ?? LoopTimer(loop: loop)
        paceTimers[pusher] = timer
        timer.start(afterMilliseconds: milliseconds) { [unowned self] in
            switch pace.due(pusher, now: loop.now) {
            case .failure(let wait):
                guard let milliseconds = wait.milliseconds else {
                    paceTimers.removeValue(forKey: pusher)?.close()
                    return
                }
                showSummary(of: pusher, after: milliseconds)
            case .success(let (held, count, replacing)):
                paceTimers.removeValue(forKey: pusher)?.close()
                guard let notifier else { return }
                let summary = count == 1 ? held : DesktopNotification(
                    title: held.title, body: held.body + (held.body.isEmpty ? "" : "\n")
                        + "(and \(count - 1) more from \(pusher), coalesced)")
                let replaced = count == 1 ? identities.serverID(for: held.id) : replacing ?? 0
                let generation = serverGeneration
                notifier.show(summary, appName: appName, replacing: replaced) { [unowned self] result in
                    guard case .success(let server) = result, generation == serverGeneration else { return }
                    if count == 1 { identities.record(server, id: held.id) } else { pace.summaryShown(pusher, as: server) }
                }
            }
        }
    }

    /// A close or an action of one of the host's notifications, to subscribers.
    private func signal(_ signal: DesktopNotifier.Signal) {
        let event: DesktopNotificationEvent
        switch signal {
        case .closed(let server, let reason):
            // Another application's (a server that broadcasts), or forgotten.
            guard let id = identities.known(server) else { return }
            identities.forget(server)
            event = DesktopNotificationEvent(notification: server, id: id, reason: reason)
        case .action(let server, let key):
            guard let id = identities.known(server) else { return }
            event = DesktopNotificationEvent(notification: server, id: id, action: key)
        case .serverGone:
            // A push with a payload id shown before is a new notification
            // now, and a summary no replacement of the last: the old
            // server's ids may be another application's. Its answers
            // still on their way are not recorded (the generation).
            identities = NotificationIdentities()
            pace.forgetSummaries()
            serverGeneration += 1
            return
        }
        onEvent?(event)
    }
}
