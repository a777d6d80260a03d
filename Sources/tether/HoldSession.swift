import Glibc
import SystemPackage
import TetherGroup
import TetherLoop

/// `tether hold` on the event loop: take the lock, run the command, pass
/// signals on, let go when the command exits.
final class HoldSession: LoopSession, @unchecked Sendable {
    private let target: LockTarget
    private let path: String
    private let command: [String]
    private let wait: Seconds?
    private var lock: LivenessLock?
    private var child: ChildProcess?

    static let forwardedSignals = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    init(target: LockTarget, path: String, command: [String], wait: Seconds?) throws {
        self.target = target
        self.path = path
        self.command = command
        self.wait = wait
        try super.init()
    }

    override func start() {
        guard handleSignals(Self.forwardedSignals, { [unowned self] in self.received($0) }) else { return }
        if let wait {
            LivenessLock.acquire(on: loop, path: path, label: target.label,
                                 timeoutMilliseconds: wait.milliseconds) { [unowned self] in self.acquired($0) }
        } else {
            acquired(Result { () throws(GroupError) in try LivenessLock.tryAcquire(path: path, label: target.label) })
        }
    }

    private func acquired(_ result: Result<LivenessLock?, GroupError>) {
        switch result {
        case .failure(let error):
            finish(.failure(CLIError(error)))
        case .success(nil):
            let holder = (try? LockProbe.status(ofLockAt: path))?.holder.map { " (pid \($0.pid))" } ?? ""
            let waited = wait.map { " after waiting \($0.text)" } ?? ""
            finish(.failure(.refused("\(target) is already running\(holder)\(waited)")))
        case .success(let lock?):
            self.lock = lock
            spawn()
        }
    }

    private func spawn() {
        let options = ProcessOptions(executable: command[0], arguments: Array(command.dropFirst()))
        do {
            child = try ChildProcess.spawn(loop: loop, options) { [unowned self] status in
                self.finish(.success(status.shellCode))
            }
        } catch .noSuchFileOrDirectory {
            finish(.failure(.badInput("command not found: \(command[0])")))
        } catch .permissionDenied {
            finish(.failure(.badInput("cannot run \(command[0]): permission denied")))
        } catch {
            finish(.failure(.environment("cannot run \(command[0]): \(error)")))
        }
    }

    private func received(_ signal: Int32) {
        if let child, child.exitStatus == nil {
            try? child.signal(signal)
        } else if child == nil {
            finish(.failure(.refused("interrupted while waiting for \(target)'s lock")))
        }
    }

    override func willFinish() {
        lock?.release()
        lock = nil
    }
}
