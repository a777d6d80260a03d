import FoundationEssentials
import TetherLoop
import Glibc

/// The host at scale (issue 43): N on-demand example widgets under one host
/// with default flags, each figure against the same run's baseline.
/// - scale.ready: host spawn until its ready line, against the host with none;
/// - scale.launch.first-tenth, scale.launch.last-tenth: `extension.start`
///   one by one until attached, against spawning `tether probe` to exit
///   (before, and just before each of those launches);
/// - scale.launch.burst: all N asked at once, per launch;
/// - scale.status, scale.metrics: connect, ask, read the answer, with N
///   running, against the host with none; scale.status.limited: the same
///   status listing 10 (a status bar's `status --limit 10`);
/// - scale.rss.peak, scale.rss.after: the host's peak through the burst,
///   and once every extension was stopped, against the host with none;
/// - scale.idle-wakeups: the host's wake-ups (voluntary context switches
///   of all its threads: each a sleep a wake-up ended) a second over 10 s
///   (a watchdog period: every extension is pinged once) with N running and
///   nothing asked, against the host with none; scale.idle-preemptions: its
///   involuntary switches meanwhile (taken off a CPU while it ran, by the
///   N extensions answering at once: no sleep, no wake-up);
/// - scale.stop: SIGTERM to exit with N running, and what was left;
///   scale.stop.work: the CPU time the whole machine spent meanwhile (N
///   exits and the host's part), against the stop's time on every CPU;
/// - scale.flood: `host.status` answered while 100 clients send it flat out
///   and never read, against the idle host; with the host's peak meanwhile.
struct ScaleBenchmark {
    let scratch: BenchScratch, count: Int

    func run() throws -> [BenchResult] {
        let tether = scratch.tools.tether
        let widget = scratch.tools.bin + "/example-widget"
        guard access(widget, X_OK) == 0 else {
            throw BenchError.environment("the scale benchmark needs \(widget); build the examples with 'swift build'")
        }
        let manifests = try writeManifests(widget: widget)
        let empty = scratch.path + "/scale-none"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)

        // Baselines: the same host with no extensions, and a CLI start.
        let idle = try ScaleHost(tether: tether, group: scratch.path + "/scale-idle", manifests: empty)
        let idleStatus = try idle.samples(of: "host.status", count: 50)
        let idleMetrics = try idle.samples(of: "host.metrics", count: 50)
        let idleRSS = residentMemory(of: idle.process.pid)
        let flood = try floodSamples(idle)
        let idleSwitches = Self.switchesPerSecond(of: idle.process.pid)
        _ = try idle.stop()
        func cliStarts() throws -> Percentiles {
            Percentiles(nanoseconds: try measure(samples: 30, warmup: 3) {
                let probe = try BenchProcess([tether, "probe", "host", "--group", scratch.path + "/scale-idle"])
                try probe.wait()
            })
        }
        let cliStart = try cliStarts()

        // One by one.
        let host = try ScaleHost(tether: tether, group: scratch.path + "/scale-one", manifests: manifests)
        let tenth = max(1, count / 10)
        var launches: [UInt64] = []
        // A CLI start just before each launch of the first and last tenth:
        // the machine's speed drifts within a run (a shared VM's by 2x),
        // and N more processes make any start dearer on some machines.
        var firstStarts: [UInt64] = [], lastStarts: [UInt64] = []
        for index in 0..<count {
            if index < tenth || index >= count - tenth {
                let start = MonotonicClock.nanoseconds()
                try BenchProcess([tether, "probe", "host", "--group", scratch.path + "/scale-idle"]).wait()
                let took = MonotonicClock.nanoseconds() - start
                if index < tenth { firstStarts.append(took) } else { lastStarts.append(took) }
            }
            let start = MonotonicClock.nanoseconds()
            try host.call("extension.start", #"{"name":"\#(Self.name(index))"}"#)
            launches.append(MonotonicClock.nanoseconds() - start)
        }
        let status = try host.samples(of: "host.status", count: 20)
        let limitedStatus = try host.samples(of: "host.status", #"{"limit":10}"#, count: 20)
        let metrics = try host.samples(of: "host.metrics", count: 20)
        let switches = Self.switchesPerSecond(of: host.process.pid)
        let stopStart = MonotonicClock.nanoseconds()
        let busyBefore = MachineTime.busySeconds()
        _ = try host.stop()
        let stopTime = MonotonicClock.nanoseconds() - stopStart
        let busyAfter = MachineTime.busySeconds()
        let stopWork = busyBefore.flatMap { before in busyAfter.map { $0 - before } }
        let cpus = Double(ProcessInfo.processInfo.activeProcessorCount)
        let left = leftovers(widget: widget)

        // A burst: every launch asked at once on 8 connections.
        let burstHost = try ScaleHost(tether: tether, group: scratch.path + "/scale-burst", manifests: manifests)
        let burstStart = MonotonicClock.nanoseconds()
        try burstHost.callAll("extension.start", (0..<count).map { #"{"name":"\#(Self.name($0))"}"# })
        let burst = MonotonicClock.nanoseconds() - burstStart
        try burstHost.callAll("extension.stop", (0..<count).map { #"{"name":"\#(Self.name($0))"}"# })
        // The host gives memory back a second after a burst; a margin on the clock.
        sleepSeconds(1.5)
        let peak = residentMemory(of: burstHost.process.pid, field: "VmHWM")
        let after = residentMemory(of: burstHost.process.pid)
        _ = try burstHost.stop()

        let mib = 1.0 / 1_048_576
        func megabytes(_ bytes: UInt64) -> Percentiles { Percentiles(p50: Double(bytes) * mib, p99: Double(bytes) * mib) }
        let perBurstLaunch = Double(burst) / Double(count) / 1_000
        let results = [
            BenchResult(name: "scale.ready", samples: [host.readyNanoseconds],
                        baselines: ["no extensions": Percentiles(nanoseconds: [idle.readyNanoseconds])]),
            BenchResult(name: "scale.launch.first-tenth", samples: Array(launches.prefix(tenth)),
                        baselines: ["spawn tether probe to exit": cliStart,
                                    "the same, each just before a launch": Percentiles(nanoseconds: firstStarts)]),
            BenchResult(name: "scale.launch.last-tenth", samples: Array(launches.suffix(tenth)),
                        baselines: ["first tenth": Percentiles(nanoseconds: Array(launches.prefix(tenth))),
                                    "spawn tether probe to exit, each just before a launch": Percentiles(nanoseconds: lastStarts)]),
            BenchResult(name: "scale.launch.burst", unit: "µs/launch", p50: perBurstLaunch, p99: perBurstLaunch, samples: count,
                        baselines: ["spawn tether probe to exit": cliStart]),
            BenchResult(name: "scale.status", samples: status, baselines: ["no extensions": Percentiles(nanoseconds: idleStatus)]),
            BenchResult(name: "scale.status.limited", samples: limitedStatus,
                        baselines: ["no extensions": Percentiles(nanoseconds: idleStatus)]),
            BenchResult(name: "scale.metrics", samples: metrics, baselines: ["no extensions": Percentiles(nanoseconds: idleMetrics)]),
            BenchResult(name: "scale.rss.peak", unit: "MiB", p50: Double(peak) * mib, p99: Double(peak) * mib, samples: 1,
                        baselines: ["no extensions": megabytes(idleRSS)]),
            BenchResult(name: "scale.rss.after", unit: "MiB", p50: Double(after) * mib, p99: Double(after) * mib, samples: 1,
                        baselines: ["no extensions": megabytes(idleRSS)]),
            BenchResult(name: "scale.idle-wakeups", unit: "n/s", p50: switches.wakeups, p99: switches.wakeups, samples: 1,
                        baselines: ["no extensions": Percentiles(p50: idleSwitches.wakeups, p99: idleSwitches.wakeups)]),
            BenchResult(name: "scale.idle-preemptions", unit: "n/s", p50: switches.preemptions, p99: switches.preemptions,
                        samples: 1,
                        baselines: ["no extensions": Percentiles(p50: idleSwitches.preemptions, p99: idleSwitches.preemptions)]),
            BenchResult(name: "scale.stop", unit: "ms", p50: Double(stopTime) / 1e6, p99: Double(stopTime) / 1e6, samples: 1,
                        baselines: ["processes left": Percentiles(p50: Double(left), p99: Double(left))]),
            BenchResult(name: "scale.flood", samples: flood.status,
                        baselines: ["idle": Percentiles(nanoseconds: idleStatus), "host peak MiB": megabytes(flood.peak)]),
        ]
        guard let stopWork else { return results }
        let capacity = Percentiles(p50: Double(stopTime) / 1e9 * cpus, p99: Double(stopTime) / 1e9 * cpus)
        return results + [BenchResult(name: "scale.stop.work", unit: "CPU-s", p50: stopWork, p99: stopWork, samples: 1,
                                      baselines: ["the stop's time on every CPU": capacity])]
    }

    static func name(_ index: Int) -> String { "w\(index)" }

    /// Wake-ups and preemptions of every thread of `pid` a second, over
    /// 10 s in which nothing asks it anything (`ProcessCounters`).
    static func switchesPerSecond(of pid: pid_t) -> (wakeups: Double, preemptions: Double) {
        func switches() -> (wakeups: Int, preemptions: Int) {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
            return tasks.reduce((0, 0)) { total, task in
                let counters = ProcessCounters(pid: pid, task: task)
                return (total.wakeups + counters.wakeups, total.preemptions + counters.preemptions)
            }
        }
        let before = switches()
        sleepSeconds(10)
        let after = switches()
        return (Double(after.wakeups - before.wakeups) / 10, Double(after.preemptions - before.preemptions) / 10)
    }

    /// N on-demand widgets that show one entry and rest (no idle end
    /// within the run).
    private func writeManifests(widget: String) throws -> String {
        let directory = scratch.path + "/scale-manifests"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for index in 0..<count {
            let name = Self.name(index)
            let manifest = #"{"name":"\#(name)","role":"widget","executable":"\#(widget)","arguments":["--entries","1","--policy","never"],"activation":"on-demand","idleTimeout":3600}"#
            try Data(manifest.utf8).write(to: URL(fileURLWithPath: "\(directory)/\(name).extension.json"))
        }
        return directory
    }

    /// 100 clients send `host.status` until their sockets take no more, and
    /// never read; meanwhile a fresh client's `host.status`, 50 times.
    private func floodSamples(_ host: ScaleHost) throws -> (status: [UInt64], peak: UInt64) {
        let request = Array(#"{"jsonrpc":"2.0","id":1,"method":"host.status"}"#.utf8) + [0x0a]
        let burst = Array(repeating: request, count: 64).flatMap { $0 }
        var flooders: [LineSocket] = []
        for _ in 0..<100 { flooders.append(try LineSocket(connectingTo: host.socket)) }
        var status: [UInt64] = []
        var peak: UInt64 = 0
        for _ in 0..<50 {
            for flooder in flooders { flooder.sendWhileTaken(burst, atMost: 16) }
            let start = MonotonicClock.nanoseconds()
            try host.call("host.status", "{}")
            status.append(MonotonicClock.nanoseconds() - start)
            peak = max(peak, residentMemory(of: host.process.pid))
        }
        return (status, peak)
    }

    /// Example widgets still alive after their host stopped.
    private func leftovers(widget: String) -> Int {
        var left = 0
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return 0 }
        for entry in entries where Int32(entry) != nil {
            if (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(entry)/exe")) == widget { left += 1 }
        }
        return left
    }
}

/// One host for the scale benchmark: its ready time, calls on its socket.
private final class ScaleHost {
    let process: BenchProcess
    let socket: String
    let readyNanoseconds: UInt64

    init(tether: String, group: String, manifests: String) throws {
        socket = group + "/host.sock"
        let start = MonotonicClock.nanoseconds()
        process = try BenchProcess([tether, "host", "--group", group, "--extensions-dir", manifests], quietStderr: true)
        _ = try process.readUntil { $0.hasPrefix("tether host ready") }
        readyNanoseconds = MonotonicClock.nanoseconds() - start
        try process.discardOutput()
    }

    /// One request on a fresh connection; throws on an error answer.
    func call(_ method: String, _ params: String) throws {
        let connection = try LineSocket(connectingTo: socket)
        let reply = try connection.readReply(to: Array(#"{"jsonrpc":"2.0","id":1,"method":"\#(method)","params":\#(params)}"#.utf8) + [0x0a])
        guard !reply.contains(#""error""#) else { throw BenchError.environment("\(method) failed: \(reply.prefix(300))") }
    }

    /// Connect, ask, read the whole answer: `count` times.
    func samples(of method: String, _ params: String = "{}", count: Int) throws -> [UInt64] {
        try measure(samples: count, warmup: 2) { try call(method, params) }
    }

    /// Every request at once, spread over 8 connections; returns once all
    /// are answered, throwing on the first error answer.
    func callAll(_ method: String, _ params: [String]) throws {
        let connections = try (0..<8).map { _ in try LineSocket(connectingTo: socket) }
        var expected = Array(repeating: 0, count: connections.count)
        for (index, parameters) in params.enumerated() {
            let line = Array(#"{"jsonrpc":"2.0","id":\#(index),"method":"\#(method)","params":\#(parameters)}"#.utf8) + [0x0a]
            guard connections[index % connections.count].sendOnly(line) else {
                throw BenchError.environment("the host closed a connection mid-burst")
            }
            expected[index % connections.count] += 1
        }
        for (connection, lines) in zip(connections, expected) {
            for _ in 0..<lines {
                let reply = try connection.nextLine(timeoutMilliseconds: 120_000)
                guard !reply.contains(#""error""#) else { throw BenchError.environment("\(method) failed: \(reply.prefix(300))") }
            }
        }
    }

    func stop() throws -> UInt64 {
        kill(process.pid, SIGTERM)
        return try process.wait()
    }
}
