import Foundation
import Testing
import TetherGroup
import TetherLoop
import TetherTestSupport

@Suite(.timed) struct LockWatcherTests {
    @Test func reportsAHolderArrivingAndLeaving() async throws {
        let dir = try TemporaryDirectory()
        let path = try GroupDirectory(path: dir.group).preparedLockPath(for: .feature(FeatureName("w")))
        let seen: [Bool] = try await onLoop { loop, finish in
            var seen: [Bool] = []
            var lock: LivenessLock?
            var watcher: LockWatcher?
            watcher = try LockWatcher(loop: loop, path: path) { status in
                seen.append(status.running)
                if status.running {
                    #expect(lock != nil)
                    lock?.release()
                } else {
                    watcher?.close()
                    finish(seen)
                }
            }
            seen.append(watcher?.status.running ?? true)
            lock = try LivenessLock.tryAcquire(path: path, label: "w")
        }
        #expect(seen == [false, true, false])
    }

    @Test func waitingAcquisitionGetsTheLockWhenTheHolderLetsGo() async throws {
        let dir = try TemporaryDirectory()
        let path = try GroupDirectory(path: dir.group).preparedLockPath(for: .feature(FeatureName("wait")))
        let first = try #require(try LivenessLock.tryAcquire(path: path, label: "first"))
        let gotIt: Bool = try await onLoop { loop, finish in
            LivenessLock.acquire(on: loop, path: path, label: "second", timeoutMilliseconds: 10_000) { result in
                let lock = (try? result.get()) ?? nil
                finish(lock != nil)
                lock?.release()
            }
            // Letting go is the event the waiter must react to.
            first.release()
        }
        #expect(gotIt)
    }

    @Test func waitingAcquisitionTimesOutWhileHeld() async throws {
        let dir = try TemporaryDirectory()
        let path = try GroupDirectory(path: dir.group).preparedLockPath(for: .host)
        let holder = try #require(try LivenessLock.tryAcquire(path: path, label: "host"))
        defer { holder.release() }
        let result: Bool = try await onLoop { loop, finish in
            LivenessLock.acquire(on: loop, path: path, label: "second", timeoutMilliseconds: 50) { result in
                if case .success(nil) = result { finish(true) } else { finish(false) }
            }
        }
        #expect(result)
    }

    /// The lock file replaced while the kernel's queue overflowed (a flood
    /// of changes elsewhere on the loop's one inotify instance): the
    /// replacement's event is lost, so the watcher follows the path again
    /// and sees the new file's holder.
    @Test(.enabled(if: InotifyTests.queueLimit <= 1 << 16, "too many events to make"))
    func aLockFileReplacedDuringAnOverflowIsFollowed() async throws {
        let dir = try TemporaryDirectory()
        let path = try GroupDirectory(path: dir.group).preparedLockPath(for: .feature(FeatureName("flooded")))
        let flood = dir.path + "/flood"
        try FileManager.default.createDirectory(atPath: flood, withIntermediateDirectories: true)
        let running: Bool = try await onLoop(timeoutMilliseconds: 30_000) { loop, finish in
            var lock: LivenessLock?
            var watcher: LockWatcher?
            let elsewhere = try StoreWatcher(loop: loop, paths: [flood + "/store.json"]) { _ in }
            watcher = try LockWatcher(loop: loop, path: path) { status in
                guard status.running else { return }
                watcher?.close()
                elsewhere.close()
                lock?.release()
                finish(true)
            }
            // The loop reads nothing until this returns: the kernel queues it all.
            try InotifyTests.flood(flood)
            #expect(rename(path, path + ".old") == 0)
            lock = try LivenessLock.tryAcquire(path: path, label: "new")
            #expect(lock != nil)
        }
        #expect(running)
    }
}
