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

    private let loop: EventLoop
    private let socketPath: String
    private let hostLockPath: String
    private let hello: JSONValue
    /// The launch link, until it is opened.
    private var inherited: Int32?
    private let onEvent: (Event) -> Void
    private var watcher: LockWatcher?
    private var connection: RPCConnection?
    private var connecting = false
    private var attachedTo: Int32?
    private var hostStopping = false
    /// A host that refused our hello is not asked again until the lock changes hands.
    private var refused = false
    private var retryTimer: LoopTimer?
    /// Reconnecting to a host that holds its lock but does not answer yet.
    private var retry = Backoff(first: 5, maximum: 1_000)
    private var closed = false
    /// Calls made while a connection is being set up wait for its outcome.
    private var queued: [(method: String, params: JSONValue?, completion: (Result<JSONValue, ExtensionError>) -> Void)] = []
    private var queueTimer: LoopTimer?
    /// Attached before confinement, with no sockets after it: never connects.
    private var early: EarlyAttachment.Outcome?
    private let connects: Bool
    private var toldHostIsBack = false

    /// Why such a keyboard does not attach to a host it did not start with.
    static let attachesOnlyAtStart = "a keyboard without open access started by hand is confined without Unix sockets, "
        + "so it attaches only when it starts: start it again to attach to a new host"

    /// How long a call waits for a host that holds its lock but does not answer yet.
    static let queueTimeout: UInt64 = 5_000

    init(loop: EventLoop, socketPath: String, hostLockPath: String, inherited: Int32? = nil, hello: JSONValue,
         early: EarlyAttachment.Outcome? = nil, onEvent: @escaping (Event) -> Void) {
        self.loop = loop
        self.early = early
        connects = early == nil
        self.inherited = inherited
        self.socketPath = socketPath
        self.hostLockPath = hostLockPath
        self.hello = hello
        self.onEvent = onEvent
    }

    var isAttached: Bool { attachedTo != nil }
    /// Attaches only when it starts (a keyboard confined without sockets).
    var attachesOnlyAtStart: Bool { !connects }
    /// The host said it is stopping (a detach after that is expected).
    var hostIsStopping: Bool { hostStopping }
    var hostPID: Int32? { attachedTo }

    func start() throws(GroupError) {
        if let descriptor = inherited {
            inherited = nil
            do throws(Errno) {
                return attach(RPCConnection(stream: try PipeStream.adopting(loop: loop, fileDescriptor: descriptor),
                                            goodbye: HostNotification.disconnecting))
            } catch {
                return onEvent(.detached(reason: "the link to the host that launched this extension failed (\(error))"))
            }
        }
        let watcher = try LockWatcher(loop: loop, path: hostLockPath) { [unowned self] status in
            self.hostLockChanged(running: status.running)
        }
        self.watcher = watcher
        if let early {
            self.early = nil
            return startEarly(early)
        }
        if watcher.status.running {
            connect()
        } else if SocketFile.exists(at: socketPath) {
            // A socket unit may listen there: the connection starts a host.
            connect(unreachable: "no host is running")
        } else {
            onEvent(.detached(reason: "no host is running"))
        }
    }

    private func startEarly(_ outcome: EarlyAttachment.Outcome) {
        switch outcome {
        case .attached(let descriptor, let pid, let openAccess):
            do throws(Errno) {
                listen(RPCConnection(stream: try PipeStream.adopting(loop: loop, fileDescriptor: descriptor),
                                     goodbye: HostNotification.disconnecting))
            } catch {
                return onEvent(.detached(reason: "the connection to host pid \(pid) failed (\(error))"))
            }
            attachedTo = pid
            onEvent(.attached(hostPID: pid, openAccess: openAccess, events: []))
        case .unattached(let reason):
            onEvent(.detached(reason: reason))
        case .incompatible(let reason):
            onEvent(.incompatible(reason: reason))
        }
    }

    /// True while a host holds the lock and the link is on its way to it.
    private var isSettling: Bool {
        !closed && attachedTo == nil && (connecting || connection != nil || retryTimer?.isActive == true)
    }

    /// Calls the host. While the link is still connecting the call waits for
    /// it (up to `queueTimeout`); with no host it fails with `.hostNotRunning`.
    func call(_ method: String, _ params: JSONValue?, _ completion: @escaping (Result<JSONValue, ExtensionError>) -> Void) {
        guard let connection, attachedTo != nil else {
            guard isSettling else { return completion(.failure(.hostNotRunning)) }
            queued.append((method, params, completion))
            if queueTimer == nil {
                let timer = LoopTimer(loop: loop)
                queueTimer = timer
                timer.start(afterMilliseconds: Self.queueTimeout) { [unowned self] in self.flushQueue() }
            }
            return
        }
        connection.call(method, params) { result in
            switch result {
            case .success(let value): completion(.success(value))
            case .failure(let error):
                completion(.failure(connection.isClosed ? .hostNotRunning : .refused(error.message)))
            }
        }
    }

    func close() {
        guard !closed else { return }
        closed = true
        watcher?.close()
        watcher = nil
        retryTimer?.close()
        retryTimer = nil
        connection?.close()
        connection = nil
        flushQueue()
    }

    /// Sends the waiting calls if attached, else fails them.
    private func flushQueue() {
        queueTimer?.close()
        queueTimer = nil
        let waiting = queued
        queued.removeAll()
        for call in waiting {
            if attachedTo != nil { self.call(call.method, call.params, call.completion) }
            else { call.completion(.failure(.hostNotRunning)) }
        }
    }

    private func hostLockChanged(running: Bool) {
        guard running else { return }  // the connection's end reports the loss
        guard connects else {
            // Said once: it would otherwise repeat with every host.
            guard connection == nil, !toldHostIsBack else { return }
            toldHostIsBack = true
            return onEvent(.detached(reason: "a host is running, but this keyboard cannot attach to it"))
        }
        refused = false
        if connection == nil && !connecting {
            retry.reset()
            connect()
        }
    }

    /// `unreachable`: said if the connection fails while no host holds the lock.
    private func connect(unreachable: String? = nil) {
        guard !closed, !refused else { return }
        connecting = true
        PipeStream.connect(loop: loop, path: socketPath) { [unowned self] result in
            self.connecting = false
            switch result {
            case .failure:
                let held = (try? LockProbe.status(ofLockAt: self.hostLockPath, identifyHolder: false).running) ?? false
                if let unreachable, !held { return self.onEvent(.detached(reason: unreachable)) }
                self.retryIfHostHeld()
            case .success(let stream):
                guard !self.closed else { return stream.close() }
                self.attach(RPCConnection(stream: stream, goodbye: HostNotification.disconnecting))
            }
        }
    }

    private func attach(_ connection: RPCConnection) {
        listen(connection)
        sayHello(on: connection)
    }

    /// Serves the host's requests on `connection` (its pings first).
    private func listen(_ connection: RPCConnection) {
        self.connection = connection
        hostStopping = false
        connection.start(handler: { [unowned self] _, method, params, respond in
            // The watchdog: answered here, on the loop, so only a turning
            // loop answers it (a blocked one is caught and replaced).
            if method == ExtensionMethod.ping { return respond(.success([:])) }
            if method == HostNotification.stopping { self.hostStopping = true }
            self.onEvent(.message(method: method, params: params, respond: respond))
        }, onClose: { [unowned self] _ in
            self.connectionClosed()
        })
    }

    private func sayHello(on connection: RPCConnection) {
        connection.call(HostMethod.hello, hello) { [unowned self] result in
            switch result {
            case .success(let answer):
                guard let answer = HelloAnswer(json: answer) else { return connection.close() }
                self.retry.reset()
                self.attachedTo = answer.hostPID
                self.onEvent(.attached(hostPID: answer.hostPID, openAccess: answer.openAccess, events: answer.events))
                self.flushQueue()
            case .failure(let error):
                guard !connection.isClosed else { return }
                self.refused = true
                // The event comes last: it may end the extension, and this link with it.
                connection.close()
                self.flushQueue()
                if error.code == RPCError.unsupportedProtocolCode {
                    return self.onEvent(.incompatible(reason: "the host refused this extension: \(error.message) "
                                                      + "(this SDK speaks version \(HostProtocol.current))"))
                }
                self.onEvent(.detached(reason: "the host refused this extension: \(error.message)"))
            }
        }
    }

    private func connectionClosed() {
        connection = nil
        guard !closed else { return }
        if let pid = attachedTo {
            attachedTo = nil
            let reason = hostStopping ? "host pid \(pid) stopped" : "lost the connection to host pid \(pid)"
            onEvent(.detached(reason: reason))
            guard connects else { return flushQueue() }
        } else if watcher == nil, !refused {
            // The launch link, closed before a hello was answered.
            refused = true
            flushQueue()
            return onEvent(.detached(reason: "the host that launched this extension closed its link"))
        }
        // A launch link is not replaced: a launched extension ends with its host.
        guard watcher != nil else { return flushQueue() }
        retryIfHostHeld()
    }

    /// Tries again shortly, but only while some host holds the host lock;
    /// otherwise the watcher calls when one appears.
    private func retryIfHostHeld() {
        guard !closed, !refused else { return }
        let held = (try? LockProbe.status(ofLockAt: hostLockPath, identifyHolder: false).running) ?? false
        guard held else { return flushQueue() }
        let timer = retryTimer ?? LoopTimer(loop: loop)
        retryTimer = timer
        timer.start(afterMilliseconds: retry.next()) { [unowned self] in
            if self.connection == nil && !self.connecting { self.connect() }
        }
    }
}
