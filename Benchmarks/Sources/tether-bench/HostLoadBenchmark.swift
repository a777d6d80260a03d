import FoundationEssentials
import TetherLoop
import Glibc

/// The host under what real use throws at it, against the same host idle,
/// in one run:
/// - host.status.under-spam: connect + `host.status` + answer while one
///   extension (`yes`) prints as fast as it can; baseline: an idle host;
/// - host.cpu.under-spam: the host's share of a core meanwhile; baseline:
///   the spamming extension's own share;
/// - host.rss.after-abuse: resident memory once 100 clients that never read
///   their answers have gone; baselines: idle, and the peak during.
struct HostLoadBenchmark {
    let scratch: BenchScratch, scale: Double

    func run() throws -> [BenchResult] {
        let tether = scratch.tools.tether
        let samples = max(20, Int(500 * scale))

        let idleGroup = scratch.path + "/load-idle"
        let idle = try BenchProcess([tether, "host", "--group", idleGroup], quietStderr: true)
        _ = try idle.readUntil { $0.hasPrefix("tether host ready") }
        let idleStatus = try statusSamples(group: idleGroup, samples: samples)
        let (idleRSS, peakRSS, afterRSS) = try abuse(idle, group: idleGroup)
        kill(idle.pid, SIGTERM)
        _ = try idle.wait()

        let spamGroup = scratch.path + "/load-spam"
        let manifests = scratch.path + "/load-manifests"
        try FileManager.default.createDirectory(atPath: manifests, withIntermediateDirectories: true)
        let manifest = #"{"name":"spam","role":"widget","executable":"/usr/bin/yes","arguments":["spam"],"restart":"always"}"#
        try Data(manifest.utf8).write(to: URL(fileURLWithPath: manifests + "/spam.extension.json"))
        let spam = try BenchProcess([tether, "host", "--group", spamGroup, "--extensions-dir", manifests], quietStderr: true)
        _ = try spam.readUntil { $0.hasPrefix("tether host ready") }
        // Nobody reads the host's stdout from here on, as with `host | sleep`.
        let spammer = try spamPID(group: spamGroup)
        let window = max(1.0, 5 * scale)
        let hostBefore = ProcessCounters(pid: spam.pid)
        let spammerBefore = ProcessCounters(pid: spammer)
        // The measurement window: CPU is what happens over time, so here the
        // benchmark waits on the clock.
        sleepSeconds(window)
        let hostPercent = (ProcessCounters(pid: spam.pid).cpuMilliseconds - hostBefore.cpuMilliseconds) / (10 * window)
        let spammerPercent = (ProcessCounters(pid: spammer).cpuMilliseconds - spammerBefore.cpuMilliseconds) / (10 * window)
        let spamStatus = try statusSamples(group: spamGroup, samples: samples)
        kill(spam.pid, SIGTERM)
        _ = try spam.wait()

        let mib = 1.0 / 1_048_576
        return [
            BenchResult(name: "host.status.under-spam", samples: spamStatus,
                        baselines: ["host.status idle": Percentiles(nanoseconds: idleStatus)]),
            BenchResult(name: "host.cpu.under-spam", unit: "%", p50: hostPercent, p99: hostPercent, samples: 1,
                        baselines: ["the spamming extension": Percentiles(p50: spammerPercent, p99: spammerPercent)]),
            BenchResult(name: "host.rss.after-abuse", unit: "MiB", p50: Double(afterRSS) * mib,
                        p99: Double(afterRSS) * mib, samples: 1,
                        baselines: ["idle": Percentiles(p50: Double(idleRSS) * mib, p99: Double(idleRSS) * mib),
                                    "peak during": Percentiles(p50: Double(peakRSS) * mib, p99: Double(peakRSS) * mib)]),
        ]
    }

    /// Connect, ask `host.status`, read the answer, close: what `tether
    /// status` costs the host, without the CLI's own start-up.
    private func statusSamples(group: String, samples: Int) throws -> [UInt64] {
        let request = Array(#"{"jsonrpc":"2.0","id":1,"method":"host.status"}"#.utf8) + [0x0a]
        return try measure(samples: samples, warmup: 5) {
            let socket = try LineSocket(connectingTo: group + "/host.sock")
            try socket.exchange(request, lines: 1)
        }
    }

    /// 100 clients send 20 pushes of 100 KB each (answered at once with the
    /// payload: no notification extension) and never read; then they go.
    /// Resident memory before, at the peak, and once the host trimmed.
    private func abuse(_ host: BenchProcess, group: String) throws -> (UInt64, UInt64, UInt64) {
        let idle = residentMemory(of: host.pid)
        let payload = String(repeating: "x", count: 100_000)
        let request = Array((#"{"jsonrpc":"2.0","id":1,"method":"push.send","params":{"payload":{"data":""#
            + payload + "\"}}}\n").utf8)
        var peak = idle
        var clients: [LineSocket] = []
        for _ in 0..<100 {
            let client = try LineSocket(connectingTo: group + "/host.sock")
            // Without waiting: the host stops reading a peer whose answers
            // pile up (backpressure), so a blocking send would wait forever.
            client.sendWhileTaken(request, atMost: 20)
            clients.append(client)
            peak = max(peak, residentMemory(of: host.pid))
        }
        clients.removeAll()
        // The host trims a second after large peers leave; the measurement
        // waits out that second and a margin on the clock.
        sleepSeconds(1.5)
        return (idle, peak, residentMemory(of: host.pid))
    }

    /// The spamming extension's pid, from the host's status.
    private func spamPID(group: String) throws -> Int32 {
        let request = Array(#"{"jsonrpc":"2.0","id":1,"method":"host.status"}"#.utf8) + [0x0a]
        for _ in 0..<100 {
            let socket = try LineSocket(connectingTo: group + "/host.sock")
            let line = try socket.readReply(to: request)
            if let match = line.firstMatch(of: /"pid":(\d+),"restarts"/), let pid = Int32(match.1) { return pid }
        }
        throw BenchError.environment("the spamming extension did not start")
    }
}
