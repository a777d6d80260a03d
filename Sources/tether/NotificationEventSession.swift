import Glibc
import TetherGroup
import TetherIPC
import TetherJSON
import TetherLoop

/// The desktop notifications' events on one connection to the host:
/// `tether watch notifications` prints each; `tether push --wait` pushes
/// on the same connection (subscribed first, so nothing is missed) and
/// ends with the first event of the notification it showed.
final class NotificationEventSession: LoopSession, @unchecked Sendable {
    enum Mode {
        case watch
        /// Prints the push's answer (`printAnswer`), then waits.
        case push(PushRequest, waitMilliseconds: UInt64, printAnswer: (PushAnswer) -> Void)
    }

    private let group: GroupDirectory
    private let mode: Mode
    private let json: Bool
    private let timeout: Seconds?
    private var connection: RPCConnection?
    /// `push --wait`: the notification waited for, once the answer names it;
    /// events before that are kept (bounded) until it does.
    private var awaited: UInt32?
    private var answer: PushAnswer?
    private var early: [DesktopNotificationEvent] = []

    init(group: GroupDirectory, mode: Mode, json: Bool, timeout: Seconds?) throws {
        self.group = group
        self.mode = mode
        self.json = json
        self.timeout = timeout
        try super.init()
    }

    override func start() {
        if case .watch = mode { streamOutput() }
        guard handleSignals([SIGINT, SIGTERM, SIGHUP], { [unowned self] _ in
            if case .watch = self.mode { return self.finish(.success(0)) }
            self.finish(.success(1))
        }) else { return }
        if let timeout {
            LoopTimer(loop: loop).start(afterMilliseconds: timeout.milliseconds) { [unowned self] in
                if case .watch = self.mode { return self.finish(.success(1)) }
                self.finish(.failure(.refused("timed out after \(timeout.text) waiting for the notification to close")))
            }
        }
        let running = (try? LockProbe.status(of: .host, in: group, identifyHolder: false).status.running) ?? false
        guard running || SocketFile.exists(at: group.socketPath) else { return finish(.failure(.refused("host is not running"))) }
        PipeStream.connect(loop: loop, path: group.socketPath) { [unowned self] connected in
            switch connected {
            case .failure:
                self.finish(.failure(.refused("host is not running (its socket \(self.group.socketPath) does not answer)")))
            case .success(let stream):
                let connection = RPCConnection(stream: stream, maximumFrameSize: RPCCall.maximumAnswerSize,
                                               goodbye: HostNotification.disconnecting)
                self.connection = connection
                connection.start(handler: { [unowned self] _, method, params, respond in
                    if method == HostNotification.stopping { return }
                    guard let event = DesktopNotificationEvent(event: method, params: params) else {
                        return respond(.failure(.methodNotFound(method)))
                    }
                    self.received(event)
                }, onClose: { [unowned self] _ in
                    self.finish(.failure(.refused("the host stopped")))
                })
                self.subscribe(connection)
            }
        }
    }

    private func subscribe(_ connection: RPCConnection) {
        let events = [HostNotification.notificationClosed, HostNotification.notificationAction]
        connection.call(HostMethods.subscribe, Subscription(events: events)) { [unowned self] result in
            let heard = (try? result.get())?.events ?? []
            guard events.allSatisfy(heard.contains) else {
                return self.finish(.failure(.refused("this host does not tell desktop notifications' events (an older release)")))
            }
            guard case .push(let request, let wait, let printAnswer) = self.mode else {
                return self.printStatus(on: connection)
            }
            self.push(request, on: connection, waitingAtMost: wait, printAnswer)
        }
    }

    /// A watch's first line, once subscribed: whether anything is shown.
    private func printStatus(on connection: RPCConnection) {
        connection.call(HostMethods.status, StatusRequest(limit: 0)) { [unowned self] result in
            guard case .success(let answer) = result else { return self.finish(.failure(.refused("the host did not say its status"))) }
            let status = answer.desktopNotifications
            output(self.json ? JSONValue.object(["desktopNotifications": status.json]).description : PrintableText.escaped(status.text))
        }
    }

    private func push(_ request: PushRequest, on connection: RPCConnection, waitingAtMost milliseconds: UInt64,
                      _ printAnswer: @escaping (PushAnswer) -> Void) {
        let timer = LoopTimer(loop: loop)
        timer.start(afterMilliseconds: milliseconds) { [unowned self] in
            self.finish(.failure(.environment("the host did not answer within \(Seconds(milliseconds: milliseconds).text)")))
        }
        connection.call(HostMethods.push, request) { [unowned self] result in
            timer.close()
            switch result {
            case .failure(let error):
                return self.finish(.failure(.refused(error.message)))
            case .success(let answer):
                guard let display = answer.desktop else {
                    return self.finish(.failure(.refused("this host does not show pushes on the desktop (an older release)")))
                }
                guard let notification = display.notification else {
                    return self.finish(.failure(.refused("\(display.text); nothing to wait for")))
                }
                if !self.json { printAnswer(answer) }
                self.answer = answer
                self.awaited = notification
                let early = self.early
                self.early = []
                for event in early { self.received(event) }
            }
        }
    }

    private func received(_ event: DesktopNotificationEvent) {
        switch mode {
        case .watch:
            output(json ? Self.named(event).description : PrintableText.escaped(event.text))
        case .push:
            guard let awaited else {
                // Before the answer: another push's, or ours (kept a while).
                if early.count < 64 { early.append(event) }
                return
            }
            guard event.notification == awaited else { return }
            if json, case .object(var object)? = answer?.wire {
                object["event"] = Self.named(event)
                output(JSONValue.object(object).description)
            } else {
                output(PrintableText.escaped(event.text))
            }
            finish(.success(0))
        }
    }

    /// The event's fields and its name (`event`).
    private static func named(_ event: DesktopNotificationEvent) -> JSONValue {
        let name: JSONValue = ["event": .string(event.event)]
        return name.merging(event.json)
    }

    override func willFinish() {
        connection?.close()
        connection = nil
    }
}

extension JSONValue {
    /// This object with `other`'s fields added.
    fileprivate func merging(_ other: JSONValue) -> JSONValue {
        guard case .object(var mine) = self, case .object(let theirs) = other else { return self }
        for (key, value) in theirs { mine[key] = value }
        return .object(mine)
    }
}
