import FoundationEssentials
import TetherLoop
import Glibc

/// The host with the three example extensions: start → all attached,
/// restart after kill -9, CPU while idle, resident memory.
struct HostBenchmark {
    let scratch: BenchScratch, scale: Double
    static let examples = ["example-widget", "example-keyboard", "example-notification"]

    func run() throws -> [BenchResult] {
        let tether = scratch.tools.tether
        let manifests = try writeManifests(next: tether)
        let iterations = max(3, Int(10 * scale))
        var attach: [UInt64] = []
        var restart: [UInt64] = []
        for index in 0..<iterations {
            let run = try HostRun(tether: tether, group: scratch.path + "/host-\(index)", manifests: manifests)
            attach.append(run.attachNanoseconds)
            restart.append(try run.restartWidget())
            _ = try run.stop()
        }
        // Idle: what the kernel counted for the host over a quiet window
        // (CPU in clock ticks, and every time it woke from a sleep).
        let window = max(1.0, 10 * scale)
        let idle = try HostRun(tether: tether, group: scratch.path + "/host-idle", manifests: manifests)
        _ = try idle.restartWidget()
        let before = ProcessCounters(pid: idle.process.pid)
        // The measurement window itself: idle is what happens over time
        // with nothing to do, so here the benchmark waits on the clock.
        sleepSeconds(window)
        let after = ProcessCounters(pid: idle.process.pid)
        let rss = Double(idle.process.residentBytes) / 1_048_576
        let extensionRSS = Double(idle.widgetResidentBytes) / 1_048_576
        let privateRSS = Double(residentMemory(of: idle.process.pid, field: "RssAnon")) / 1_048_576
        _ = try idle.stop()
        let idleMilliseconds = (after.cpuMilliseconds - before.cpuMilliseconds) * 10 / window
        let wakeups = Double(after.wakeups - before.wakeups) * 10 / window

        let start = Percentiles(nanoseconds: try measure(samples: iterations, warmup: 1) {
            let probe = try BenchProcess([tether, "probe", "host", "--group", scratch.path + "/host-0"])
            try probe.wait()
        })
        let pushes = try PushBenchmark(scratch: scratch, scale: scale).run(probeBaseline: start)
        return [
            BenchResult(name: "host.attach", samples: attach,
                        baselines: ["spawn tether probe to exit": start]),
            BenchResult(name: "host.restart", samples: restart,
                        baselines: ["spawn tether probe to exit": start]),
            BenchResult(name: "host.idle-cpu", unit: "ms/10s", p50: idleMilliseconds,
                        p99: idleMilliseconds, samples: 1),
            BenchResult(name: "host.idle-wakeups", unit: "n/10s", p50: wakeups, p99: wakeups, samples: 1),
            BenchResult(name: "host.rss", unit: "MiB", p50: rss, p99: rss, samples: 1,
                        baselines: ["example extension rss": Percentiles(p50: extensionRSS, p99: extensionRSS),
                                    "host private (RssAnon)": Percentiles(p50: privateRSS, p99: privateRSS)]),
        ] + pushes
    }

    /// The example manifests, naming the built examples next to tether.
    private func writeManifests(next tether: String) throws -> String {
        let directory = directoryName(tether)
        let manifests = scratch.path + "/manifests"
        try FileManager.default.createDirectory(atPath: manifests, withIntermediateDirectories: true)
        for name in Self.examples {
            let executable = directory + "/" + name
            guard access(executable, X_OK) == 0 else {
                throw BenchError.environment("the host benchmark needs \(executable); build the examples with 'swift build'")
            }
            let role = name.hasPrefix("example-") ? String(name.dropFirst("example-".count)) : name
            let arguments = role == "widget" ? #"["--entries","1","--policy","never"]"# : "[]"
            // All three run from the start: host.attach waits for each.
            let manifest = #"{"name":"\#(name)","role":"\#(role)","executable":"\#(executable)","arguments":\#(arguments),"activation":"always"}"#
            try Data(manifest.utf8).write(to: URL(fileURLWithPath: "\(manifests)/\(name).extension.json"))
        }
        return manifests
    }
}

/// One host with the examples, timed from spawn until all three attached.
private final class HostRun {
    let process: BenchProcess
    let attachNanoseconds: UInt64
    private var widgetPID: Int32 = 0

    init(tether: String, group: String, manifests: String) throws {
        let start = MonotonicClock.nanoseconds()
        process = try BenchProcess([tether, "host", "--group", group, "--extensions-dir", manifests])
        var attached: Set<String> = []
        while attached.count < HostBenchmark.examples.count {
            let line = try process.readLine()
            guard let (name, pid) = Self.attached(line) else { continue }
            attached.insert(name)
            if name == "example-widget" { widgetPID = pid }
        }
        attachNanoseconds = MonotonicClock.nanoseconds() - start
    }

    var widgetResidentBytes: UInt64 { residentMemory(of: widgetPID) }

    /// kill -9 the widget; nanoseconds until its replacement attached.
    func restartWidget() throws -> UInt64 {
        let start = MonotonicClock.nanoseconds()
        kill(widgetPID, SIGKILL)
        let old = widgetPID
        while true {
            let line = try process.readLine()
            if let (name, pid) = Self.attached(line), name == "example-widget", pid != old {
                widgetPID = pid
                return MonotonicClock.nanoseconds() - start
            }
        }
    }

    /// SIGTERM; the host's CPU time over its whole life.
    func stop() throws -> UInt64 {
        kill(process.pid, SIGTERM)
        return try process.wait()
    }

    /// "extension 'NAME' attached (pid N)" → (NAME, N)
    private static func attached(_ line: String) -> (String, Int32)? {
        guard let match = line.firstMatch(of: /^extension '([^']+)' attached \(pid (\d+)/), let pid = Int32(match.2) else {
            return nil
        }
        return (String(match.1), pid)
    }
}

/// CPU time and context switches of a process, from /proc.
struct ProcessCounters {
    var cpuMilliseconds: Double = 0
    /// Voluntary switches: each a sleep (in `epoll_wait`, say) that a
    /// wake-up ended. What an idle process's cost to the machine is.
    var wakeups: Int = 0
    /// Involuntary switches: taken off a CPU while it ran, by others that
    /// were due (3,000 extensions answering at once): no sleep, no wake-up.
    var preemptions: Int = 0

    /// The whole process's CPU; the switches of its main thread, or of `task`.
    init(pid: pid_t, task: String? = nil) {
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        // Fields after the parenthesised command name; utime and stime are the 12th and 13th.
        if let close = stat.lastIndex(of: ")") {
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) {
                cpuMilliseconds = (user + system) * 1000 / Double(sysconf(Int32(_SC_CLK_TCK)))
            }
        }
        let path = task.map { "/proc/\(pid)/task/\($0)/status" } ?? "/proc/\(pid)/status"
        let status = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        for line in status.split(separator: "\n") where line.contains("ctxt_switches:") {
            let count = line.split(separator: "\t").last.flatMap { Int($0.trimmed) } ?? 0
            if line.hasPrefix("nonvoluntary") { preemptions += count } else { wakeups += count }
        }
    }
}
