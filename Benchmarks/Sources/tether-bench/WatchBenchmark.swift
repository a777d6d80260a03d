import FoundationEssentials
import Glibc
import TetherGroup
import TetherLoop

/// How soon a watcher learns that a holder was killed with SIGKILL, against
/// how soon the loop learns of the same process's exit through its pidfd (the
/// parent's own, privileged view), in the same iterations.
struct WatchBenchmark {
    let scratch: BenchScratch, scale: Double

    func run() throws -> [BenchResult] {
        let group = try GroupDirectory(path: scratch.path + "/watch")
        let path = try group.preparedLockPath(for: .feature(FeatureName("bench-watch")))
        let executable = scratch.tools.tether
        let loop: EventLoop
        do { loop = try EventLoop() } catch { throw BenchError.environment("cannot start the event loop: \(error)") }
        let session = WatchBenchSession(
            loop: loop, path: path, holderCommand: [executable, "hold", "feature", "bench-watch",
                                                    "--group", group.path, "--", "cat"],
            iterations: max(10, Int(100 * scale)))
        loop.execute { session.start() }
        loop.run()
        if let failure = session.failure { throw BenchError.environment("watch benchmark: \(failure)") }
        return [BenchResult(name: "watch.kill9", samples: session.watchSamples,
                            baselines: ["child exit via its pidfd": Percentiles(nanoseconds: session.exitSamples)])]
    }
}

private final class WatchBenchSession: @unchecked Sendable {
    let loop: EventLoop
    let path: String
    let holderCommand: [String]
    let iterations: Int
    var watchSamples: [UInt64] = []
    var exitSamples: [UInt64] = []
    var failure: String?

    private var watcher: LockWatcher?
    private var holder: ChildProcess?
    private var killedAt: UInt64 = 0
    private var sawRelease = false
    private var sawExit = false

    init(loop: EventLoop, path: String, holderCommand: [String], iterations: Int) {
        self.loop = loop
        self.path = path
        self.holderCommand = holderCommand
        self.iterations = iterations
    }

    func start() {
        // A bound on the whole run, in case a holder never shows up.
        LoopTimer(loop: loop).start(afterMilliseconds: 120_000) { [unowned self] in
            self.stop(failure: "timed out after \(self.watchSamples.count) of \(self.iterations) iterations")
        }
        do {
            watcher = try LockWatcher(loop: loop, path: path) { [unowned self] status in self.changed(status) }
        } catch {
            stop(failure: "\(error)")
            return
        }
        spawnHolder()
    }

    private func spawnHolder() {
        killedAt = 0
        sawRelease = false
        sawExit = false
        let options = ProcessOptions(executable: holderCommand[0], arguments: Array(holderCommand.dropFirst()),
                                     stdin: .pipe, stdout: .ignore, stderr: .inherit)
        do {
            holder = try ChildProcess.spawn(loop: loop, options) { [unowned self] _ in self.exited() }
        } catch {
            stop(failure: "cannot start a holder: \(error)")
        }
    }

    private func changed(_ status: LockStatus) {
        if status.running, killedAt == 0, let holder {
            killedAt = MonotonicClock.nanoseconds()
            try? holder.signal(SIGKILL)
        } else if !status.running, killedAt != 0, !sawRelease {
            watchSamples.append(MonotonicClock.nanoseconds() - killedAt)
            sawRelease = true
            next()
        }
    }

    private func exited() {
        guard killedAt != 0 else { return stop(failure: "a holder exited before it was killed") }
        exitSamples.append(MonotonicClock.nanoseconds() - killedAt)
        sawExit = true
        // The holder's `cat` reads our pipe: closing it lets `cat` end too.
        holder?.close()
        next()
    }

    private func next() {
        guard sawRelease && sawExit else { return }
        if watchSamples.count >= iterations { stop(failure: nil) } else { spawnHolder() }
    }

    private func stop(failure: String?) {
        if self.failure == nil { self.failure = failure }
        watcher?.close()
        watcher = nil
        loop.stop()
    }
}
