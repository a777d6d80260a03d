import Glibc
import TetherGroup
import TetherLoop

/// `tether hold --wait`: waits for the lock on the event loop, event-driven
/// and bounded; SIGINT, SIGTERM, SIGHUP or SIGQUIT meanwhile gives up.
final class LockWaitSession: LoopSession, @unchecked Sendable {
    private let target: LockTarget
    private let path: String
    private let wait: Seconds
    private(set) var lock: LivenessLock?

    init(target: LockTarget, path: String, wait: Seconds) throws {
        self.target = target
        self.path = path
        self.wait = wait
        try super.init()
    }

    override func start() {
        guard handleSignals(Hold.forwardedSignals, { [unowned self] signal in
            guard self.lock == nil else {
                // It came as the lock was taken: pending again (blocked
                // now), it goes to the command once that runs.
                kill(getpid(), signal)
                return
            }
            self.finish(.failure(.refused("interrupted while waiting for \(self.target)'s lock")))
        }) else { return }
        LivenessLock.acquire(on: loop, path: path, label: target.label,
                             timeoutMilliseconds: wait.milliseconds) { [unowned self] result in
            switch result {
            case .failure(let error):
                finish(.failure(CLIError(error)))
            case .success(nil):
                finish(.failure(Hold.refusal(target: target, path: path, waited: wait)))
            case .success(let lock?):
                // From here a forwarded signal is for the command: blocked,
                // it waits for the foreground run to pass it on.
                do throws(ChildProcess.ForegroundFailure) {
                    try ChildProcess.blockForForeground(forwarding: Hold.forwardedSignals)
                } catch {
                    lock.release()
                    return finish(.failure(.environment("cannot block signals: \(error)")))
                }
                self.lock = lock
                finish(.success(0))
            }
        }
    }
}
