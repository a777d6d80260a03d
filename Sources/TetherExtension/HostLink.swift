import SystemPackage
import TetherGroup
import TetherIPC
import TetherLoop

/// The extension's connection to whichever host holds the group's host lock.
///
/// It watches the host lock (inotify, no polling): when a host appears it
/// connects and says hello; when the connection closes it reports the host
/// gone and waits for the next one. While the lock is held but the socket
/// does not answer yet (a host still starting, or one just gone), it retries
/// on a short doubling timer, and stops as soon as the lock is free.
///
/// A launched extension instead speaks through the link its host handed it
/// at spawn (`LaunchLink`): no watching, no socket; when that link closes,
/// the host that launched it is gone.
///
/// A keyboard without open access started by hand attached before it
/// confined itself (`EarlyAttachment`) and may make no socket since: it
/// keeps that connection, and when it closes it says once that it cannot
/// attach to another host (the watcher only tells it one is back).
final class HostLink {
    enum Event {
        /// `events`: what the host agreed to tell it unasked (the hello's `events`).
        case attached(hostPID: Int32, openAccess: Bool, events: [String])
        case detached(reason: String)
        /// The host speaks no protocol version this SDK does: the sentence
        /// naming the versions it speaks.
        case incompatible(reason: String)
        /// A request or notification from the host; `respond` does nothing
        /// for a notification.
        case message(method: String, params: JSONValue?, respond: RPCConnection.Respond)
    }

    typealias Lifecycle = HostLinkLifecycle<RPCConnection>

    private let loop: EventLoop
    private let socketPath: String
    private let hostLockPath: String
    private let hello: JSONValue
    /// The launch link, until it is opened.
    private var inherited: Int32?
    /// Attached before confinement, with no sockets after it: never connects.
    private var early: EarlyAttachment.Outcome?
    private let onEvent: (Event) -> Void
    /// Where it is: every decision is made there.
    private var lifecycle = Lifecycle()
    /// Events that came while an event's actions were being carried out
    /// (a close's `onClose`, a handler that closes the link): each waits
    /// for the one before to be done, so no action decided earlier runs
    /// after a later event changed the state.
    private var waitingEvents: [Lifecycle.Event] = []
    private var handling = false
    private var watcher: LockWatcher?
    private var retryTimer: LoopTimer?
    /// Calls made while a connection is being set up wait for its outcome.
    private var queued: [(method: String, params: JSONValue?, completion: (Result<JSONValue, ExtensionError>) -> Void)] = []
    private var queueTimer: LoopTimer?

    /// Why such a keyboard does not attach to a host it did not start with.
    static let attachesOnlyAtStart = "a keyboard without open access started by hand is confined without Unix sockets, "
        + "so it attaches only when it starts: start it again to attach to a new host"

    /// How long a call waits for a host that holds its lock but does not answer yet.
    static let queueTimeout: UInt64 = 5_000

    init(loop: EventLoop, socketPath: String, hostLockPath: String, inherited: Int32? = nil, hello: JSONValue,
         early: EarlyAttachment.Outcome? = nil, onEvent: @escaping (Event) -> Void) {
        self.loop = loop
        self.early = early
        self.inherited = inherited
        self.socketPath = socketPath
        self.hostLockPath = hostLockPath
        self.hello = hello
        self.onEvent = onEvent
    }

    var isAttached: Bool { lifecycle.hostPID != nil }
    /// Attaches only when it starts (a keyboard confined without sockets).
    var attachesOnlyAtStart: Bool { lifecycle.reach == .confined }
    /// The host said it is stopping (a detach after that is expected).
    var hostIsStopping: Bool { lifecycle.hostIsStopping }
    var hostPID: Int32? { lifecycle.hostPID }

    func start() throws(GroupError) {
        if let descriptor = inherited {
            inherited = nil
            do throws(Errno) {
                let stream = try PipeStream.adopting(loop: loop, fileDescriptor: descriptor)
                return handle(.adopted(RPCConnection(stream: stream, goodbye: HostNotification.disconnecting)))
            } catch {
                let why = "the link to the host that launched this extension failed (\(error))"
                return handle(.unattached(.detached(reason: why), reach: .launched))
            }
        }
        let watcher = try LockWatcher(loop: loop, path: hostLockPath) { [unowned self] status in
            // Only a new holder matters: the connection's end reports a loss.
            if status.running { self.handle(.hostLockTaken) }
        }
        self.watcher = watcher
        if let early {
            self.early = nil
            return startEarly(early)
        }
        handle(.watch(lockHeld: watcher.status.running, socketExists: SocketFile.exists(at: socketPath)))
    }

    private func startEarly(_ outcome: EarlyAttachment.Outcome) {
        switch outcome {
        case .attached(let descriptor, let pid, let openAccess):
            do throws(Errno) {
                let stream = try PipeStream.adopting(loop: loop, fileDescriptor: descriptor)
                let connection = RPCConnection(stream: stream, goodbye: HostNotification.disconnecting)
                handle(.attachedEarly(connection, hostPID: pid, openAccess: openAccess))
            } catch {
                handle(.unattached(.detached(reason: "the connection to host pid \(pid) failed (\(error))"), reach: .confined))
            }
        case .unattached(let reason):
            handle(.unattached(.detached(reason: reason), reach: .confined))
        case .incompatible(let reason):
            handle(.unattached(.incompatible(reason: reason), reach: .confined))
        }
    }

    /// Calls the host. While the link is still connecting the call waits for
    /// it (up to `queueTimeout`); with no host it fails with `.hostNotRunning`.
    func call(_ method: String, _ params: JSONValue?, _ completion: @escaping (Result<JSONValue, ExtensionError>) -> Void) {
        switch lifecycle.callRoute {
        case .fail:
            completion(.failure(.hostNotRunning))
        case .wait:
            queued.append((method, params, completion))
            guard queueTimer == nil else { return }
            let timer = LoopTimer(loop: loop)
            queueTimer = timer
            timer.start(afterMilliseconds: Self.queueTimeout) { [unowned self] in self.flushCalls() }
        case .send(let connection):
            connection.call(method, params) { result in
                switch result {
                case .success(let value): completion(.success(value))
                case .failure(let error):
                    completion(.failure(connection.isClosed ? .hostNotRunning : .refused(error.message)))
                }
            }
        }
    }

    func close() { handle(.close) }

    /// One event through the lifecycle, and its actions carried out in
    /// order; events it causes meanwhile, after it.
    private func handle(_ event: Lifecycle.Event) {
        waitingEvents.append(event)
        guard !handling else { return }
        handling = true
        defer { handling = false }
        while !waitingEvents.isEmpty {
            for action in lifecycle.handle(waitingEvents.removeFirst()) { perform(action) }
        }
    }

    private func perform(_ action: Lifecycle.Action) {
        switch action {
        case .connect: connect()
        case .listen(let connection): listen(connection)
        case .sayHello(let connection): sayHello(on: connection)
        case .closeConnection(let connection): connection.close()
        case .scheduleRetry(let delay):
            let timer = retryTimer ?? LoopTimer(loop: loop)
            retryTimer = timer
            timer.start(afterMilliseconds: delay) { [unowned self] in self.handle(.retryDue) }
        case .cancelRetry:
            retryTimer?.close()
            retryTimer = nil
        case .stopWatching:
            watcher?.close()
            watcher = nil
        case .flushCalls: flushCalls()
        case .tell(.attached(let pid, let openAccess, let events)):
            onEvent(.attached(hostPID: pid, openAccess: openAccess, events: events))
        case .tell(.detached(let reason)): onEvent(.detached(reason: reason))
        case .tell(.incompatible(let reason)): onEvent(.incompatible(reason: reason))
        }
    }

    /// Sends the waiting calls if attached, else fails them.
    private func flushCalls() {
        queueTimer?.close()
        queueTimer = nil
        let waiting = queued
        queued.removeAll()
        for call in waiting {
            if isAttached { self.call(call.method, call.params, call.completion) }
            else { call.completion(.failure(.hostNotRunning)) }
        }
    }

    private var hostLockHeld: Bool {
        (try? LockProbe.status(ofLockAt: hostLockPath, identifyHolder: false).running) ?? false
    }

    /// Asked only where the answer decides a retry: a launched or confined
    /// link never connects again, and a closed one is done.
    private var hostLockHeldForRetry: Bool {
        if case .closed = lifecycle.state { return false }
        return lifecycle.reach == .watching && hostLockHeld
    }

    private func connect() {
        PipeStream.connect(loop: loop, path: socketPath) { [unowned self] result in
            switch result {
            case .failure: self.handle(.connectFailed(lockHeld: self.hostLockHeld))
            case .success(let stream):
                self.handle(.connected(RPCConnection(stream: stream, goodbye: HostNotification.disconnecting)))
            }
        }
    }

    /// Serves the host's requests on `connection` (its pings first).
    private func listen(_ connection: RPCConnection) {
        connection.start(handler: { [unowned self] _, method, params, respond in
            // The watchdog: answered here, on the loop, so only a turning
            // loop answers it (a blocked one is caught and replaced).
            if method == ExtensionMethod.ping { return respond(.success([:])) }
            if method == HostNotification.stopping { self.handle(.hostStopping) }
            self.onEvent(.message(method: method, params: params, respond: respond))
        }, onClose: { [unowned self] _ in
            self.handle(.connectionClosed(lockHeld: self.hostLockHeldForRetry))
        })
    }

    private func sayHello(on connection: RPCConnection) {
        connection.call(HostMethod.hello, hello) { [unowned self] result in
            switch result {
            case .success(let answer):
                guard let answer = HelloAnswer(json: answer) else { return self.handle(.helloUnreadable) }
                self.handle(.welcomed(hostPID: answer.hostPID, openAccess: answer.openAccess, events: answer.events))
            case .failure(let error):
                // A closed connection's end is told by its close.
                guard !connection.isClosed else { return }
                self.handle(.helloRefused(message: error.message,
                                          incompatible: error.code == RPCError.unsupportedProtocolCode))
            }
        }
    }
}
