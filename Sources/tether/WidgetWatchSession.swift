import Glibc
import TetherGroup
import TetherIPC
import TetherLoop

/// `tether widget watch` on the event loop: the widget's line now, then a
/// line each time it changes. Without a host it says so (offline) and
/// waits for one on the host's lock; when the host goes, the same, so a
/// status bar's line follows a host restart without being restarted.
final class WidgetWatchSession: LoopSession, @unchecked Sendable {
    private let group: GroupDirectory
    private let name: String
    private let format: WidgetLineFormat
    private var hostLock: LockWatcher?
    private var connection: RPCConnection?
    private var connecting = false
    private var retryTimer: LoopTimer?
    /// Looks again for a host that holds its lock but does not answer yet
    /// (still starting): 20 ms, doubling to a second.
    private var retry = Backoff(first: 20, maximum: 1_000)
    private var lastEntry: WidgetEntry?
    /// A host answered the watch once: the name is a widget's, so a widget
    /// by hand not attached yet to a new host is waited for, not refused.
    private var answeredOnce = false
    private var lastLine: String?

    init(group: GroupDirectory, name: String, format: WidgetLineFormat) throws {
        self.group = group
        self.name = name
        self.format = format
        try super.init()
    }

    override func start() {
        streamOutput()
        guard handleSignals([SIGINT, SIGTERM, SIGHUP], { [unowned self] _ in self.finish(.success(0)) }) else { return }
        retryTimer = LoopTimer(loop: loop)
        do {
            let watcher = try LockWatcher(loop: loop, path: try group.preparedLockPath(for: .host)) { [unowned self] status in
                if status.running { self.connect() } else { self.hostGone() }
            }
            hostLock = watcher
        } catch {
            return finish(.failure(CLIError(error)))
        }
        // A socket unit may listen with no host yet: connecting starts one.
        connect()
    }

    private func connect() {
        guard connection == nil, !connecting else { return }
        connecting = true
        PipeStream.connect(loop: loop, path: group.socketPath) { [unowned self] result in
            self.connecting = false
            switch result {
            case .failure:
                self.hostGone()
                self.connectSoon()
            case .success(let stream):
                self.attach(stream)
            }
        }
    }

    /// While the host's lock is held (a host starting, or one dying whose
    /// lock the watcher has not seen go yet): connects again after a
    /// growing pause. Otherwise the lock's watcher connects when a host
    /// takes it.
    private func connectSoon() {
        guard hostLock?.status.running == true else { return }
        retryTimer?.start(afterMilliseconds: retry.next()) { [unowned self] in self.connect() }
    }

    private func attach(_ stream: PipeStream) {
        let connection = RPCConnection(stream: stream, goodbye: HostNotification.disconnecting)
        self.connection = connection
        connection.start(handler: { [unowned self] _, method, params, respond in
            guard method == HostNotification.widgetChanged else {
                // host.stopping needs nothing: the close that follows says offline.
                return respond(.failure(.methodNotFound(method)))
            }
            if let update = WidgetUpdate(json: params), update.name == self.name { self.show(WidgetLine(update)) }
        }, onClose: { [unowned self] closed in
            guard self.connection === closed else { return }
            self.connection = nil
            self.hostGone()
            // A new host may already hold the lock (a quick restart), or
            // the lock's news is late: look again soon, not at once.
            self.connectSoon()
        })
        connection.call(HostMethods.widgetWatch, WidgetWatchRequest(name: name, untilAttached: answeredOnce)) {
            [unowned self] result in
            switch result {
            case .success(let update):
                self.retry.reset()
                self.answeredOnce = true
                self.show(WidgetLine(update))
            case .failure(let error):
                // Closed before it answered (a host dying as it was
                // reached): the close says offline and looks again.
                guard !connection.isClosed else { return }
                self.finish(.failure(.refused(error.message)))
            }
        }
    }

    private func hostGone() {
        show(WidgetLine(offline: name, last: lastEntry))
    }

    /// Prints the line unless it is the one printed last.
    private func show(_ line: WidgetLine) {
        if line.online { lastEntry = line.entry }
        let rendered = line.rendered(format)
        guard rendered != lastLine else { return }
        lastLine = rendered
        output(rendered)
    }

    override func willFinish() {
        retryTimer?.stop()
        hostLock?.close()
        hostLock = nil
        // Cleared first: its close is no host going away.
        let closing = connection
        connection = nil
        closing?.close()
    }
}
