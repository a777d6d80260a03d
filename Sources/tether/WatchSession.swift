import Glibc
import TetherGroup
import TetherLoop

/// `tether watch` on the event loop.
final class WatchSession: LoopSession, @unchecked Sendable {
    private let target: LockTarget
    private let path: String
    private let until: WatchUntil?
    private let timeout: Seconds?
    private let json: Bool
    private var watcher: LockWatcher?

    init(target: LockTarget, path: String, until: WatchUntil?, timeout: Seconds?, json: Bool) throws {
        self.target = target
        self.path = path
        self.until = until
        self.timeout = timeout
        self.json = json
        try super.init()
    }

    override func start() {
        // A plain watch prints a stream: it ends quietly when its reader does.
        if until == nil { streamOutput() }
        // Interrupting a plain watch is how it normally ends.
        guard handleSignals([SIGINT, SIGTERM, SIGHUP], { [unowned self] _ in
            self.finish(.success(self.until == nil ? 0 : 1))
        }) else { return }
        if let timeout {
            LoopTimer(loop: loop).start(afterMilliseconds: timeout.milliseconds) { [unowned self] in
                // Timed out (exit 1): silently for a plain watch, whose lines said it all.
                guard let until = self.until else { return self.finish(.success(1)) }
                let wanted = until == .running ? "running" : "not running"
                self.finish(.failure(.refused("timed out after \(timeout.text) waiting for \(self.target) to be \(wanted)")))
            }
        }
        // `--until` already true is answered by one probe. (The watcher's
        // inotify instance would be the dearest part: the kernel closes one
        // only after an RCU grace period, 10–20 ms at exit on a busy machine.)
        if let until, let status = try? LockProbe.status(ofLockAt: path, identifyHolder: true),
           status.running == (until == .running) {
            return observe(status)
        }
        do {
            let watcher = try LockWatcher(loop: loop, path: path) { [unowned self] status in self.observe(status) }
            self.watcher = watcher
            observe(watcher.status)
        } catch {
            finish(.failure(CLIError(error)))
        }
    }

    private func observe(_ status: LockStatus) {
        let report = StatusReport(target: target, lock: path, status: status)
        if let until {
            guard status.running == (until == .running) else { return }
            emit(report)
            finish(.success(0))
        } else {
            emit(report)
        }
    }

    private func emit(_ report: StatusReport) {
        if json {
            output(report.jsonValue.description)
        } else {
            output(report.text)
        }
    }

    override func willFinish() {
        watcher?.close()
        watcher = nil
    }
}
