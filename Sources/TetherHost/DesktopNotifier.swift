import CTetherBus
#if canImport(Glibc)
import Glibc
#endif
import TetherIPC
import TetherJSON
import TetherLoop

/// The desktop's notification server for the host, on its loop: one
/// connection to the session bus (CTetherBus's notifier, which connects on
/// a thread of its own and never blocks), its events read when its
/// eventfd is readable. `Notify` is answered through `show`'s completion;
/// `NotificationClosed` and `ActionInvoked` through `onSignal`.
final class DesktopNotifier {
    enum Signal {
        case closed(UInt32, reason: UInt32)
        case action(UInt32, key: String)
    }

    /// How long a server may take to answer `Notify`: past it the push is
    /// answered as not shown (the notification may still appear).
    static let answerMilliseconds: UInt64 = 2_000
    /// `Notify` calls awaiting their answer.
    static let maximumPending = 64

    private(set) var status: DesktopNotificationsStatus {
        didSet { if status != oldValue { onStatus(status) } }
    }
    /// Told each change of `status`.
    private let onStatus: (DesktopNotificationsStatus) -> Void
    private let loop: EventLoop
    private let address: String
    private let onSignal: (Signal) -> Void
    private var handle: OpaquePointer?
    private var watcher: PollWatcher?
    /// The bus socket's hang-up (a duplicate of its descriptor).
    private var hangUp: PollWatcher?
    /// Whether the server reads body markup (its capabilities say so).
    private var markup = false
    private var pending: [UInt32: (timer: LoopTimer, done: (Result<UInt32, Refusal>) -> Void)] = [:]
    /// Calls answered as not shown when their time ran out, still unanswered:
    /// a stalled bus holds them in GDBus's queue (the host's memory), so they
    /// count against `maximumPending` until the server answers or the
    /// connection goes.
    private var unanswered: Set<UInt32> = []
    /// Events the notifier's bounded queue dropped, as last told.
    private var dropped: UInt64 = 0
    /// Told when the queue dropped events (a flood of signals).
    private let onDropped: (UInt64) -> Void

    struct Refusal: Error, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }

    /// Connecting to `address` (`SessionBusAddress`) begins at once.
    init(loop: EventLoop, address: String, onStatus: @escaping (DesktopNotificationsStatus) -> Void,
         onDropped: @escaping (UInt64) -> Void, onSignal: @escaping (Signal) -> Void) {
        self.loop = loop
        self.onDropped = onDropped
        self.address = address
        self.onStatus = onStatus
        self.onSignal = onSignal
        status = DesktopNotificationsStatus(state: .connecting)
        connect()
    }

    private func connect() {
        var error = [CChar](repeating: 0, count: 256)
        guard let handle = tether_notifier_start(address, &error, error.count) else {
            status = DesktopNotificationsStatus(state: .noSessionBus, reason: Self.string(error))
            return
        }
        do {
            let watcher = try PollWatcher(loop: loop, fileDescriptor: tether_notifier_event_fd(handle))
            try watcher.start(.readable) { [unowned self] _ in self.drain() }
            self.watcher = watcher
            self.handle = handle
            status = DesktopNotificationsStatus(state: .connecting)
        } catch {
            tether_notifier_release(handle)
            status = DesktopNotificationsStatus(state: .noSessionBus, reason: "cannot watch the notifier: \(error)")
        }
    }

    /// Shows `notification` as `appName`'s, replacing the server's
    /// `replacing` (0: none); `done` gets the server's id, or why not.
    func show(_ notification: DesktopNotification, appName: String, replacing: UInt32,
              done: @escaping (Result<UInt32, Refusal>) -> Void) {
        guard let handle, status.state == .shown else {
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
        let actions = notification.actions.flatMap { [$0.key, $0.label] }
        var error = [CChar](repeating: 0, count: 256)
        let serial = withCStrings(actions) { actions in
            appName.withCString { appName in
                summary.withCString { summary in
                    body.withCString { body in
                        Self.withOptionalCString(notification.category) { category in
                            var call = tether_notification(
                                app_name: appName, replaces_id: replacing, summary: summary, body: body,
                                actions: actions, action_count: notification.actions.count,
                                urgency: notification.urgency?.level ?? -1, category: category,
                                expire_timeout: notification.expiryMilliseconds ?? -1)
                            return tether_notifier_notify(handle, &call, &error, error.count)
                        }
                    }
                }
            }
        }
        guard serial != 0 else {
            let reason = Self.string(error)
            if reason == "the session bus closed" { reconnect(reason) }
            return done(.failure(Refusal(reason: reason)))
        }
        let timer = LoopTimer(loop: loop)
        pending[serial] = (timer, done)
        timer.start(afterMilliseconds: Self.answerMilliseconds) { [unowned self] in
            self.settle(serial, .failure(Refusal(reason: "the notification server did not answer within "
                                                 + "\(Self.answerMilliseconds / 1000) s")))
            self.unanswered.insert(serial)
        }
    }

    func close(_ reason: String = "the host is stopping") {
        for serial in Array(pending.keys) { settle(serial, .failure(Refusal(reason: reason))) }
        watcher?.close()
        watcher = nil
        hangUp?.close()
        hangUp = nil
        if let handle { tether_notifier_release(handle) }
        handle = nil
        dropped = 0
        unanswered.removeAll()
    }

    /// The bus went away (`reason`), or may be back: connect again (a
    /// session bus restarted at the same address is found again).
    private func reconnect(_ reason: String?) {
        close(reason ?? "connecting to the session bus again")
        connect()
        if let reason, status.state == .connecting {
            status = DesktopNotificationsStatus(state: .connecting, reason: reason)
        }
    }

    /// Watches the bus socket for its hang-up: the bus gone, the host says so
    /// at once and connects again (which fails until a bus is back).
    private func watchHangUp() {
        guard let handle, hangUp == nil else { return }
        let descriptor = tether_notifier_bus_fd(handle)
        guard descriptor >= 0, let watcher = try? PollWatcher(loop: loop, fileDescriptor: descriptor) else { return }
        do {
            try watcher.start(.disconnect) { [unowned self] _ in
                // Level-triggered: stopped before anything else.
                self.hangUp?.stop()
                self.reconnect("the session bus closed")
            }
            hangUp = watcher
        } catch {
            watcher.close()
        }
    }

    private func settle(_ serial: UInt32, _ result: Result<UInt32, Refusal>) {
        guard let entry = pending.removeValue(forKey: serial) else {
            unanswered.remove(serial)  // a late answer: that call is done
            return
        }
        entry.timer.close()
        entry.done(result)
    }

    private func drain() {
        guard let handle else { return }
        var event = tether_notifier_event()
        // An event's handling may connect again (a new handle): this one's
        // remaining events are then of a connection that is gone.
        while self.handle == handle, tether_notifier_next(handle, &event) == 1 {
            let text = Self.text(event.text), detail = Self.text(event.detail)
            switch UInt32(bitPattern: event.kind) {
            case TETHER_NOTIFIER_CONNECTED.rawValue:
                status = DesktopNotificationsStatus(state: .connecting, reason: "asking who serves notifications")
                watchHangUp()
            case TETHER_NOTIFIER_UNREACHABLE.rawValue:
                status = DesktopNotificationsStatus(state: .noSessionBus, reason: text)
            case TETHER_NOTIFIER_SERVER.rawValue:
                markup = event.reason == 1
                status = DesktopNotificationsStatus(state: .shown, server: text, version: detail)
            case TETHER_NOTIFIER_NO_SERVER.rawValue:
                status = DesktopNotificationsStatus(state: .noServer, reason: text)
            case TETHER_NOTIFIER_SHOWN.rawValue:
                settle(event.serial, .success(event.id))
            case TETHER_NOTIFIER_FAILED.rawValue:
                settle(event.serial, .failure(Refusal(reason: "the notification server refused it: \(text)"
                                                      + (detail.isEmpty ? "" : ": \(detail)"))))
            case TETHER_NOTIFIER_CLOSED.rawValue:
                onSignal(.closed(event.id, reason: event.reason))
            case TETHER_NOTIFIER_ACTION.rawValue:
                onSignal(.action(event.id, key: text))
            default:
                break
            }
        }
        guard self.handle == handle else { return }
        let total = tether_notifier_dropped(handle)
        if total > dropped {
            onDropped(total - dropped)
            dropped = total
        }
    }

    private static func string(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A fixed C array of the event, as text (the notifier wrote UTF-8, cut
    /// at its size: a cut character is repaired).
    private static func text<T>(_ tuple: T) -> String {
        withUnsafeBytes(of: tuple) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    private static func withOptionalCString<R>(_ text: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
        guard let text else { return body(nil) }
        return text.withCString { body($0) }
    }

    /// `strings` as a C array of C strings, for the call's duration.
    private func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>?) -> R) -> R {
        var copies = strings.map { strdup($0) }
        defer { for copy in copies { free(copy) } }
        return copies.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress, !buffer.isEmpty else { return body(nil) }
            return base.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: buffer.count) { body($0) }
        }
    }
}
