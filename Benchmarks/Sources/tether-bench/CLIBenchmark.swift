import CBenchSystem
import FoundationEssentials
import TetherGroup
import TetherLoop
import Glibc

/// Whole commands as a shell script runs them, interleaved in one run with
/// what a script would otherwise use: `flock -n FILE true` and `/bin/true`.
///
/// - cli.probe, cli.hold (`-- /bin/true`), cli.watch (`--until not-running`,
///   answered at once): spawn to exit, wall time; CPU (user + system) and
///   peak RSS of each beside it.
/// - cli.extension-start: an SDK extension (example-widget) from spawn until
///   its hello reaches the host's socket, against `/bin/true`'s spawn to exit.
///
/// Times are spawned with vfork (as posix_spawn does). Peak RSS is measured
/// in separate runs, each forked from a fresh small helper (`tether-bench
/// peak-memory-of`), so that a child's high-water mark is its own.
struct CLIBenchmark {
    let scratch: BenchScratch, scale: Double

    private struct Sample {
        var wall: [UInt64] = []
        var cpu: [UInt64] = []
        var peakKiB: [UInt64] = []
    }

    func run() throws -> [BenchResult] {
        let tether = scratch.tools.tether
        let group = scratch.path + "/cli-group"
        let directory = try openGroup(group)
        let lock = try directory.preparedLockPath(for: .feature(try FeatureName("bench")))
        let flock = ["/usr/bin/flock", "-n", lock, "/bin/true"]
        guard access(flock[0], X_OK) == 0 else { throw BenchError.environment("cli needs /usr/bin/flock (util-linux)") }
        let commands: [(name: String, argv: [String])] = [
            ("flock -n FILE true", flock),
            ("/bin/true", ["/bin/true"]),
            ("cli.probe", [tether, "probe", "feature", "bench", "--group", group]),
            ("cli.hold", [tether, "hold", "feature", "bench", "--group", group, "--", "/bin/true"]),
            ("cli.watch", [tether, "watch", "feature", "bench", "--group", group, "--until", "not-running"]),
        ]
        let rounds = max(20, Int(300 * scale))
        var samples = [String: Sample]()
        for round in 0..<(rounds + 10) {
            for command in commands {
                let (wall, cpu, _) = try Self.runMeasured(command.argv, fork: false)
                if round >= 10 { samples[command.name, default: Sample()].wall.append(wall) }
                if round >= 10 { samples[command.name, default: Sample()].cpu.append(cpu) }
            }
        }
        for _ in 0..<max(5, Int(20 * scale)) {
            for command in commands {
                samples[command.name, default: Sample()].peakKiB.append(try peakMemory(command.argv, tether: tether))
            }
        }
        func stats(_ name: String) -> (wall: Percentiles, cpu: Percentiles, peak: Percentiles) {
            let sample = samples[name] ?? Sample()
            return (Percentiles(nanoseconds: sample.wall), Percentiles(nanoseconds: sample.cpu),
                    Percentiles(values: sample.peakKiB))
        }
        let flockStats = stats("flock -n FILE true"), trueStats = stats("/bin/true")
        var results: [BenchResult] = []
        for name in ["cli.probe", "cli.hold", "cli.watch"] {
            let own = stats(name)
            results.append(BenchResult(name: name, unit: "us", p50: own.wall.p50, p99: own.wall.p99, samples: rounds,
                                       baselines: ["flock -n FILE true": flockStats.wall, "/bin/true": trueStats.wall]))
            results.append(BenchResult(name: name + ".cpu", unit: "us", p50: own.cpu.p50, p99: own.cpu.p99, samples: rounds,
                                       baselines: ["flock -n FILE true": flockStats.cpu, "/bin/true": trueStats.cpu]))
            results.append(BenchResult(name: name + ".peak-rss", unit: "KiB", p50: own.peak.p50, p99: own.peak.p99,
                                       samples: samples[name]?.peakKiB.count ?? 0,
                                       baselines: ["flock -n FILE true": flockStats.peak, "/bin/true": trueStats.peak]))
        }
        if let start = try extensionStart(tether: tether, rounds: max(10, Int(100 * scale))) { results.append(start) }
        return results
    }

    /// `tether-bench peak-memory-of CMD...` (not in --help): runs CMD from this
    /// fresh, small process with fork(2) and prints its peak RSS in KiB.
    /// The bench itself has grown by then, and a forked child starts with a
    /// copy of its parent's private pages: the figure would be the parent's.
    static let peakMemoryHelper = "peak-memory-of"

    static func reportPeakMemory(of argv: [String]) throws {
        guard !argv.isEmpty else { throw BenchError.badInput("\(peakMemoryHelper) needs a command") }
        let (_, _, peak) = try runMeasured(argv, fork: true)
        output(String(peak))
    }

    /// Peak RSS (KiB) of `argv`, measured by a fresh helper process.
    private func peakMemory(_ argv: [String], tether: String) throws -> UInt64 {
        let own = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let helper = try BenchProcess([own, Self.peakMemoryHelper] + argv)
        let line = try helper.readLine(timeoutMilliseconds: 10_000)
        try helper.wait()
        guard let kib = UInt64(line) else { throw BenchError.environment("the peak memory helper said \(line)") }
        return kib
    }

    /// (wall ns, user + system ns, peak RSS KiB) of one run.
    private static func runMeasured(_ argv: [String], fork: Bool) throws -> (UInt64, UInt64, UInt64) {
        var arguments = argv.map { strdup($0) } + [nil]
        defer { arguments.forEach { free($0) } }
        var environment: [UnsafeMutablePointer<CChar>?] = [strdup("PATH=/usr/bin:/bin"), nil]
        defer { environment.forEach { free($0) } }
        var wall: Int64 = 0
        var status: Int32 = 0
        var usage = rusage()
        guard bench_run_measured(argv[0], &arguments, &environment, fork ? 1 : 0, &wall, &status, &usage) == 0 else {
            throw BenchError.environment("cannot run \(argv[0]) (errno \(errno))")
        }
        guard status & 0x7f == 0, (status >> 8) & 0xff != 127 else {
            throw BenchError.environment("\(argv.joined(separator: " ")) did not run (wait status \(status))")
        }
        func ns(_ time: timeval) -> UInt64 { UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_usec) * 1_000 }
        return (UInt64(max(0, wall)), ns(usage.ru_utime) + ns(usage.ru_stime), UInt64(max(0, usage.ru_maxrss)))
    }

    /// example-widget from spawn until its hello arrives at a stand-in host:
    /// this process holds the group's host lock and listens on its socket.
    private func extensionStart(tether: String, rounds: Int) throws -> BenchResult? {
        let widget = directoryName(tether) + "/example-widget"
        guard access(widget, X_OK) == 0 else { return nil }
        let group = scratch.path + "/cli-extension-group"
        let directory = try openGroup(group)
        let hostLock = try directory.preparedLockPath(for: .host)
        guard let held = try LivenessLock.tryAcquire(path: hostLock, label: "bench") else {
            throw BenchError.environment("the bench's host lock is taken")
        }
        defer { held.release() }
        let listener = try LineSocket.listen(at: group + "/host.sock")
        defer { close(listener) }
        var starts: [UInt64] = [], trues: [UInt64] = []
        for round in 0..<(rounds + 3) {
            let began = MonotonicClock.nanoseconds()
            let process = try BenchProcess([widget, "--group", group, "--name", "bench-widget", "--entries", "1", "--policy", "never"],
                                           quietStderr: true)
            let connection = try LineSocket.accept(listener, timeoutMilliseconds: 10_000)
            let hello = try connection.readLine(timeoutMilliseconds: 10_000)
            let elapsed = MonotonicClock.nanoseconds() - began
            guard hello.contains("extension.hello") else { throw BenchError.environment("the widget said \(hello), not hello") }
            // SIGTERM: a widget started by hand removes its TMPDIR as it
            // ends (killed, it would leave it in /tmp/tether-UID/by-hand).
            try process.terminate()
            connection.closeSocket()
            let (wall, _, _) = try Self.runMeasured(["/bin/true"], fork: false)
            if round >= 3 {
                starts.append(elapsed)
                trues.append(wall)
            }
        }
        return BenchResult(name: "cli.extension-start", samples: starts, baselines: ["/bin/true": Percentiles(nanoseconds: trues)])
    }
}
