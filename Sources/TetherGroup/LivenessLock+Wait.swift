#if os(Linux)
import TetherLoop

extension LivenessLock {
    /// Acquires the lock at `path`, waiting up to `timeoutMilliseconds` for
    /// the current holder to let go. The wait is event-driven (a
    /// `LockWatcher`), not a polling loop. Call on the loop's thread;
    /// `completion` runs there once, with nil on timeout.
    package static func acquire(
        on loop: EventLoop,
        path: String,
        label: String,
        timeoutMilliseconds: UInt64,
        completion: @escaping (Result<LivenessLock?, GroupError>) -> Void
    ) {
        do {
            if let lock = try tryAcquire(path: path, label: label) {
                completion(.success(lock))
                return
            }
        } catch {
            completion(.failure(error))
            return
        }
        let wait = Wait(path: path, label: label, timer: LoopTimer(loop: loop), completion: completion)
        do {
            let watcher = try LockWatcher(loop: loop, path: path) { status in
                if !status.running { wait.attempt() }
            }
            wait.watcher = watcher
            wait.timer.start(afterMilliseconds: timeoutMilliseconds) { wait.finish(.success(nil)) }
            // The holder may have let go between the first try and the watch.
            if !watcher.status.running { wait.attempt() }
        } catch {
            wait.finish(.failure(error))
        }
    }

    private final class Wait {
        let path: String
        let label: String
        let timer: LoopTimer
        var watcher: LockWatcher?
        var completion: ((Result<LivenessLock?, GroupError>) -> Void)?

        init(path: String, label: String, timer: LoopTimer,
             completion: @escaping (Result<LivenessLock?, GroupError>) -> Void) {
            self.path = path
            self.label = label
            self.timer = timer
            self.completion = completion
        }

        func attempt() {
            do {
                if let lock = try LivenessLock.tryAcquire(path: path, label: label) {
                    finish(.success(lock))
                }
            } catch {
                finish(.failure(error))
            }
        }

        func finish(_ result: Result<LivenessLock?, GroupError>) {
            guard let completion else { return }
            self.completion = nil
            watcher?.close()
            watcher = nil
            timer.close()
            completion(result)
        }
    }
}
#endif
