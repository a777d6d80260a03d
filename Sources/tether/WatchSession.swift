import Glibc
import TetherGroup
import TetherLoop

/// `tether watch` on the event loop.
final class WatchSession: @unchecked Sendable {
    private let loop: EventLoop
    private let target: LockTarget
    private let path: String
    private let until: WatchUntil?
    private let timeout: Seconds?
    private let json: Bool
    private var watcher: LockWatcher?
    private var finished = false
    private var outcome: Result<Int32, CLIError> = .failure(.environment("the event loop stopped early"))

    init(target: LockTarget, path: String, until: WatchUntil?, timeout: Seconds?, json: Bool) throws {
        do { loop = try EventLoop() } catch { throw CLIError.environment("cannot start the event loop: \(error)") }
        self.target = target
        self.path = path
        self.until = until
        self.timeout = timeout
        self.json = json
    }

    func run() -> Result<Int32, CLIError> {
        loop.execute { self.start() }
        loop.run()
        return outcome
    }

    private func start() {
        for signal in [SIGINT, SIGTERM, SIGHUP] {
            do {
                _ = try SignalWatcher(loop: loop, signal: signal) { [unowned self] _ in
                    // Interrupting a plain watch is how it normally ends.
                    self.finish(.success(self.until == nil ? 0 : 1))
                }
            } catch {
                finish(.failure(.environment("cannot handle signal \(signal): \(error)")))
                return
            }
        }
        if let timeout {
            LoopTimer(loop: loop).start(afterMilliseconds: timeout.milliseconds) { [unowned self] in
                guard let until = self.until else { return self.finish(.success(0)) }
                let wanted = until == .running ? "running" : "not running"
                self.finish(.failure(.refused("timed out after \(timeout.text) waiting for \(self.target) to be \(wanted)")))
            }
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
            do { try printJSON(report) } catch { output(report.text) }
        } else {
            output(report.text)
        }
    }

    private func finish(_ result: Result<Int32, CLIError>) {
        // The first outcome stands: a timer or signal racing an error must
        // not overwrite it while the loop winds down.
        guard !finished else { return }
        finished = true
        outcome = result
        watcher?.close()
        watcher = nil
        loop.stop()
    }
}
