import CBenchSystem
import FoundationEssentials
import TetherLoop
import Glibc

/// JSON-RPC against a running host on one connection: round trip and
/// pipelined throughput, each beside a raw unix-socket echo of the same
/// bytes (no JSON, no loop) in the same run.
struct IPCBenchmark {
    let scratch: BenchScratch, scale: Double

    static let request = Array(#"{"jsonrpc":"2.0","id":1,"method":"host.ping"}"#.utf8) + [0x0a]
    static let window = 64

    func run() throws -> [BenchResult] {
        let group = scratch.path + "/ipc"
        let host = try BenchProcess([scratch.tools.tether, "host", "--group", group])
        defer {
            kill(host.pid, SIGTERM)
            _ = try? host.wait()
        }
        _ = try host.readUntil { $0.hasPrefix("tether host ready") }
        let client = try LineSocket(connectingTo: group + "/host.sock")
        let echo = try LineSocket.echoPair()
        let echoProcess = try LineSocket.echoProcess()
        let samples = max(1_000, Int(20_000 * scale))
        let rounds = max(3, Int(10 * scale))

        let roundTrip = try measure(samples: samples) { try client.exchange(Self.request, lines: 1) }
        let rawRoundTrip = try measure(samples: samples) { try echo.exchange(Self.request, lines: 1) }
        let processRoundTrip = try measure(samples: samples) { try echoProcess.socket.exchange(Self.request, lines: 1) }
        let rate = try throughput(client, rounds: rounds)
        let rawRate = try throughput(echo, rounds: rounds)
        // Again with the host, this thread and a new echo thread on one CPU:
        // a wake-up that crosses to an idle (virtual) CPU costs more than
        // the work itself, and the raw baseline's synchronous wake-ups tend
        // to stay on one CPU anyway.
        var pinnedRoundTrip: [UInt64] = []
        var pinnedRaw: [UInt64] = []
        if pinToCurrentCPU([0, host.pid]) {
            let pinnedEcho = try LineSocket.echoPair()
            pinnedRoundTrip = try measure(samples: samples) { try client.exchange(Self.request, lines: 1) }
            pinnedRaw = try measure(samples: samples) { try pinnedEcho.exchange(Self.request, lines: 1) }
        }
        return [
            BenchResult(name: "ipc.roundtrip", samples: roundTrip,
                        baselines: ["raw unix socket ping/pong": Percentiles(nanoseconds: rawRoundTrip),
                                    "raw ping/pong, cat(1) echoing in another process":
                                        Percentiles(nanoseconds: processRoundTrip)]),
            BenchResult(name: "ipc.roundtrip.one-cpu", samples: pinnedRoundTrip,
                        baselines: ["raw unix socket ping/pong, one CPU": Percentiles(nanoseconds: pinnedRaw)]),
            BenchResult(name: "ipc.throughput", unit: "req/s", p50: rate.p50, p99: rate.p99, samples: rounds,
                        baselines: ["raw unix socket echo": rawRate]),
        ]
    }

    /// Requests per second over `rounds` rounds: p50 is the median round,
    /// p99 the slowest 1% (the low end, since more is better).
    private func throughput(_ socket: LineSocket, rounds: Int) throws -> Percentiles {
        let batch = Array([[UInt8]](repeating: Self.request, count: Self.window).joined())
        let perRound = max(Self.window, Int(20_000 * scale) / Self.window * Self.window)
        var rates: [Double] = []
        for _ in 0..<rounds {
            let start = MonotonicClock.nanoseconds()
            for _ in 0..<(perRound / Self.window) { try socket.exchange(batch, lines: Self.window) }
            rates.append(Double(perRound) / (Double(MonotonicClock.nanoseconds() - start) / 1e9))
        }
        rates.sort()
        return Percentiles(p50: rates[rates.count / 2], p99: rates[Int(Double(rates.count - 1) * 0.01)])
    }
}

/// Pins each of `pids` (0: the calling thread) to the CPU this thread is
/// running on. False if the kernel refuses.
private func pinToCurrentCPU(_ pids: [pid_t]) -> Bool {
    let cpu = bench_current_cpu()
    return cpu >= 0 && pids.allSatisfy { bench_pin_to_cpu($0, cpu) == 0 }
}
