import FoundationEssentials
import Glibc
import TetherGroup

/// Probe costs in each state, against what a script or a naive client would
/// do instead, all measured here and now.
struct ProbeBenchmark {
    let scratch: BenchScratch, scale: Double

    func run() throws -> [BenchResult] {
        let group = try GroupDirectory(path: scratch.path + "/probe")
        let path = try group.preparedLockPath(for: .feature(FeatureName("bench")))
        let samples = max(100, Int(20_000 * scale))
        // Create the lock file the way a first holder would.
        try LivenessLock.tryAcquire(path: path, label: "bench")?.release()

        let baselines = try measureBaselines(in: group.path, samples: samples)

        let kept = try LockProbe(path: path)
        let idle = try measure(samples: samples) { _ = try LockProbe.status(ofLockAt: path, identifyHolder: false) }
        let keptIdle = try measure(samples: samples) { _ = try kept.status() }
        guard let holder = try LivenessLock.tryAcquire(path: path, label: "bench") else {
            throw BenchError.environment("the benchmark's own lock at \(path) is held by someone else")
        }
        defer { holder.release() }
        let held = try measure(samples: samples) { _ = try LockProbe.status(ofLockAt: path, identifyHolder: false) }
        let heldWithHolder = try measure(samples: samples) { _ = try LockProbe.status(ofLockAt: path) }
        let keptHeld = try measure(samples: samples) { _ = try kept.status() }

        return [
            BenchResult(name: "probe.idle", samples: idle, baselines: baselines),
            BenchResult(name: "probe.held", samples: held, baselines: baselines),
            BenchResult(name: "probe.held+holder", samples: heldWithHolder, baselines: baselines),
            BenchResult(name: "probe.kept.idle", samples: keptIdle, baselines: baselines),
            BenchResult(name: "probe.kept.held", samples: keptHeld, baselines: baselines),
        ]
    }

    private func measureBaselines(in directory: String, samples: Int) throws -> [String: Percentiles] {
        // The floor: the article's probe, which takes the lock itself.
        let floorFile = directory + "/floor.lock"
        close(open(floorFile, O_CREAT | O_RDWR | O_CLOEXEC, 0o600))
        let floor = measure(samples: samples) {
            let fd = open(floorFile, O_RDONLY | O_CLOEXEC)
            _ = flock(fd, LOCK_EX | LOCK_NB)
            close(fd)
        }

        // A pid file and kill(pid, 0): cheap, but it lies after pid reuse.
        let pidFile = directory + "/bench.pid"
        try Data("\(getpid())\n".utf8).write(to: URL(fileURLWithPath: pidFile))
        var buffer = [UInt8](repeating: 0, count: 32)
        let pidCheck = measure(samples: samples) {
            let fd = open(pidFile, O_RDONLY | O_CLOEXEC)
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            close(fd)
            var pid: Int32 = 0
            for byte in buffer.prefix(max(0, n)) where byte >= 0x30 && byte <= 0x39 { pid = pid * 10 + Int32(byte - 0x30) }
            _ = kill(pid, 0)
        }

        return [
            "open+flock+close": Percentiles(nanoseconds: floor),
            "kill(pid,0) from pid file": Percentiles(nanoseconds: pidCheck),
            "unix socket ping/pong": Percentiles(nanoseconds: try pingPong(samples: samples)),
            "spawn flock -n": Percentiles(nanoseconds: try spawnFlock(floorFile, samples: max(20, samples / 100))),
        ]
    }

    /// One byte (a newline) there and back over a socketpair, echoed by
    /// another thread: the least an "ask the host over IPC" probe could cost.
    private func pingPong(samples: Int) throws -> [UInt64] {
        let echo = try LineSocket.echoPair()
        return try measure(samples: samples) { try echo.exchange([0x0a], lines: 1) }
    }

    /// What a shell script would do: run `flock -n FILE true`.
    private func spawnFlock(_ file: String, samples: Int) throws -> [UInt64] {
        guard access("/usr/bin/flock", X_OK) == 0 else { return [] }
        let arguments = ["/usr/bin/flock", "-n", file, "true"]
        return try measure(samples: samples, warmup: 5) {
            var argv = arguments.map { strdup($0) } + [nil]
            var envp: [UnsafeMutablePointer<CChar>?] = [nil]
            defer { argv.forEach { free($0) } }
            var pid: pid_t = 0
            guard posix_spawn(&pid, arguments[0], nil, nil, &argv, &envp) == 0 else {
                throw BenchError.environment("cannot spawn /usr/bin/flock")
            }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
    }
}
