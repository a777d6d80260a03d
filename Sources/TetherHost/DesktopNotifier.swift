#if canImport(Glibc)
import Glibc
#endif
import TetherIPC
import TetherJSON
import TetherBus
import TetherLoop

/// The desktop's notification server for the host, on its loop: one
/// connection to the session bus (TetherBus, sd-bus on the loop), which
/// never blocks it. `Notify` is answered through `show`'s completion;
/// `NotificationClosed` and `ActionInvoked` through `onSignal`.
final class DesktopNotifier {
    enum Signal {
        case closed(UInt32, reason: UInt32)
        case action(UInt32, key: String)
        /// The server left or was replaced, or the bus it was on closed:
        /// the ids it gave name nothing of the host's now (a new server
        /// counts from 1 again, and its ids are other applications').
        case serverGone
    }

    /// How long a server may take to answer `Notify`: past it the push is
    /// answered as not shown (the notification may still appear).
    static let answerMilliseconds: UInt64 = 2_000
    /// `Notify` calls awaiting their answer.
    static let maximumPending = 64

    static let name = "org.freedesktop.Notifications"
    static let path = "/org/freedesktop/Notifications"

    private(set) var status: DesktopNotificationsStatus {
        didSet { if status != oldValue { onStatus(status) } }
    }
    /// Told each change of `status`.
    private let onStatus: (DesktopNotificationsStatus) -> Void
    private let loop: EventLoop
    private let address: String
    private let onSignal: (Signal) -> Void
    private var bus: BusConnection?
    /// The server's unique name: signals from anyone else are not its.
    private var server: String?
    /// Whether the server reads body markup (its capabilities say so).
    private var markup = false
    /// The last question to the server (`askServer`): the answer to an
    /// older one (a connection or a server that is gone) is stale.
    private var question: UInt64 = 0
    /// Each push's call, so that a late answer of one that is gone is known.
    /// Not `question`: a push while the server is asked again (it was
    /// replaced) would make that answer look stale, and leave no server.
    private var serial: UInt64 = 0
    private var pending: [UInt64: (timer: LoopTimer, done: (Result<UInt32, Refusal>) -> Void)] = [:]
    /// Calls answered as not shown when their time ran out, still unanswered:
    /// a stalled bus holds them in sd-bus's queue (the host's memory), so they
    /// count against `maximumPending` until the server answers or the
    /// connection goes.
    private var unanswered: Set<UInt64> = []

    struct Refusal: Error, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }

    /// Connecting to `address` (`SessionBusAddress`) begins at once.
    init(loop: EventLoop, address: String, onStatus: @escaping (DesktopNotificationsStatus) -> Void,
         onSignal: @escaping (Signal) -> Void) {
        self.loop = loop
        self.address = address
        self.onStatus = onStatus
        self.onSignal = onSignal
        status = DesktopNotificationsStatus(state: .connecting)
        connect()
    }

    private func connect() {
        let bus: BusConnection
        do {
            bus = try BusConnection(loop: loop, address: address)
        } catch {
            status = DesktopNotificationsStatus(state: .noSessionBus, reason: error.reason)
            return
        }
        self.bus = bus
        bus.onClose = { [unowned self] error in
            // A bus that ends what it never finished (its handshake) is not
            // tried again at once: the next push tries.
            guard self.status.state != .connecting else {
                self.close(error.reason)
                self.status = DesktopNotificationsStatus(state: .noSessionBus, reason: error.reason)
                return
            }
            self.reconnect("the session bus closed")
        }
        do throws(BusError) {
            // Signals a server broadcasts (GNOME's, KDE's) reach us only
            // through a match; dunst's are sent to the caller alone, and
            // the same local match takes them.
            try bus.subscribe("type='signal',interface='\(Self.name)',path='\(Self.path)'") { [unowned self] message in
                self.serverSignal(message)
            }
            try bus.subscribe("type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(Self.name)'") {
                [unowned self] message in
                let arguments = message.arguments
                guard arguments.count == 3, arguments[0].stringValue == Self.name else { return }
                self.server = nil
                self.onSignal(.serverGone)
                if arguments[2].stringValue?.isEmpty ?? true {
                    self.status = DesktopNotificationsStatus(state: .noServer, reason: "the notification server left the bus")
                } else {
                    self.askServer()
                }
            }
        } catch {
            bus.close()
            self.bus = nil
            status = DesktopNotificationsStatus(state: .noSessionBus, reason: error.reason)
            return
        }
        status = DesktopNotificationsStatus(state: .connecting, reason: "asking who serves notifications")
        askServer()
    }

    /// GetServerInformation, then GetCapabilities: the server's name,
    /// version and whether it reads markup.
    private func askServer() {
        guard let bus else { return }
        question += 1
        let asked = question
        bus.call(destination: Self.name, path: Self.path, interface: Self.name, member: "GetServerInformation") {
            [unowned self] result in
            guard asked == self.question, let bus = self.bus else { return }
            switch result {
            case .failure(let error):
                self.status = DesktopNotificationsStatus(state: .noServer, reason: error.name ?? error.reason)
            case .success(let answer):
                let fields = answer.arguments.compactMap(\.stringValue)
                guard fields.count == 4, let sender = answer.sender else {
                    self.status = DesktopNotificationsStatus(state: .noServer, reason: "an unexpected answer")
                    return
                }
                // Its signals count from now: one sent before its capabilities' answer is its own too.
                self.server = sender
                bus.call(destination: Self.name, path: Self.path, interface: Self.name, member: "GetCapabilities") {
                    [unowned self] capabilities in
                    guard asked == self.question else { return }
                    let names = (try? capabilities.get())?.arguments.first?.items?.compactMap(\.stringValue) ?? []
                    self.markup = names.contains("body-markup")
                    self.server = sender
                    self.status = DesktopNotificationsStatus(state: .shown, server: fields[0], version: fields[2])
                }
            }
        }
    }

    private func serverSignal(_ message: BusMessage) {
        guard let server, message.sender == server else { return }
        let arguments = message.arguments
        switch message.member {
        case "NotificationClosed":
            guard arguments.count == 2, let id = arguments[0].uint32Value, let reason = arguments[1].uint32Value else { return }
            onSignal(.closed(id, reason: reason))
        case "ActionInvoked":
            guard arguments.count == 2, let id = arguments[0].uint32Value, let key = arguments[1].stringValue else { return }
            onSignal(.action(id, key: key))
        default:
            break
        }
    }

    /// Shows `notification` as `appName`'s, replacing the server's
    /// `replacing` (0: none); `done` gets the server's id, or why not.
    func show(_ notification: DesktopNotification, appName: String, replacing: UInt32,
              done: @escaping (Result<UInt32, Refusal>) -> Void) {
        guard let bus, status.state == .shown else {
            let why = status.whyNotShown ?? status.summary
            // The bus may be back (a new login at the same address): the
            // next push finds out; this one is answered now.
            if status.state == .noSessionBus { reconnect(nil) }
            return done(.failure(Refusal(reason: why)))
        }
        guard pending.count + unanswered.count < Self.maximumPending else {
            return done(.failure(Refusal(reason: "\(Self.maximumPending) notifications wait for the server's answer, the limit")))
        }
        // Markup only where the server reads it; where it does not, the
        // text is shown as it is and nothing in it is markup.
        let summary = markup ? MarkupText.escaped(notification.title) : notification.title
        let body = markup ? MarkupText.escaped(notification.body) : notification.body
        var hints: [(String, BusValue)] = []
        if let urgency = notification.urgency { hints.append(("urgency", .byte(UInt8(clamping: urgency.level)))) }
        if let category = notification.category { hints.append(("category", .string(category))) }
        let arguments: [BusValue] = [
            .string(appName), .uint32(replacing), .string(""), .string(summary), .string(body),
            .array(element: "s", notification.actions.flatMap { [BusValue.string($0.key), .string($0.label)] }),
            .properties(hints), .int32(notification.expiryMilliseconds ?? -1),
        ]
        self.serial += 1
        let serial = self.serial
        let timer = LoopTimer(loop: loop)
        pending[serial] = (timer, done)
        timer.start(afterMilliseconds: Self.answerMilliseconds) { [unowned self] in
            // Counted before its caller hears: a push made from that answer
            // must find the call still held.
            self.unanswered.insert(serial)
            self.settle(serial, .failure(Refusal(reason: "the notification server did not answer within "
                                                 + "\(Self.answerMilliseconds / 1000) s")))
        }
        // The time is the host's own; sd-bus's is only a backstop.
        bus.call(destination: Self.name, path: Self.path, interface: Self.name, member: "Notify", arguments,
                 timeoutMilliseconds: 60_000) { [unowned self] result in
            switch result {
            case .success(let answer):
                guard let id = answer.arguments.first?.uint32Value else {
                    return self.settle(serial, .failure(Refusal(reason: "the notification server answered no id")))
                }
                self.settle(serial, .success(id))
            case .failure(let error):
                let name = error.name.map { "\($0): " } ?? ""
                self.settle(serial, .failure(Refusal(reason: "the notification server refused it: \(name)\(error.reason)")))
            }
        }
    }

    func close(_ reason: String = "the host is stopping") {
        for serial in Array(pending.keys) { settle(serial, .failure(Refusal(reason: reason))) }
        bus?.close()
        bus = nil
        server = nil
        unanswered.removeAll()
    }

    /// The bus went away (`reason`), or may be back: connect again (a
    /// session bus restarted at the same address is found again).
    private func reconnect(_ reason: String?) {
        close(reason ?? "connecting to the session bus again")
        onSignal(.serverGone)
        connect()
        if let reason, status.state == .connecting {
            status = DesktopNotificationsStatus(state: .connecting, reason: reason)
        }
    }

    private func settle(_ serial: UInt64, _ result: Result<UInt32, Refusal>) {
        guard let entry = pending.removeValue(forKey: serial) else {
            unanswered.remove(serial)  // a late answer: that call is done
            return
        }
        entry.timer.close()
        entry.done(result)
    }
}
