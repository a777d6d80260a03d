import FoundationEssentials
import TetherIPC
import TetherLoop
import Glibc

/// A push through an on-demand Swift notification extension, from a client
/// on the host's socket to the delivered answer: `push.cold` finds it idle
/// (the host launches it and waits for its hello), `push.warm` finds it
/// running. The issue's goal: cold ≤ 2 × (spawn tether probe to exit) + warm.
struct PushBenchmark {
    let scratch: BenchScratch, scale: Double

    func run(probeBaseline: Percentiles) throws -> [BenchResult] {
        let tether = scratch.tools.tether
        let executable = directoryName(tether) + "/example-notification"
        guard access(executable, X_OK) == 0 else {
            throw BenchError.environment("the push benchmark needs \(executable); build the examples with 'swift build'")
        }
        let manifests = scratch.path + "/push-manifests"
        try FileManager.default.createDirectory(atPath: manifests, withIntermediateDirectories: true)
        // A long idle timeout: only the benchmark's own stop makes it idle.
        let manifest = #"{"name":"notify","role":"notification","executable":"\#(executable)","activation":"on-demand","idleTimeout":600}"#
        try Data(manifest.utf8).write(to: URL(fileURLWithPath: manifests + "/notify.extension.json"))
        let group = scratch.path + "/push-group"
        let host = try BenchProcess([tether, "host", "--group", group, "--extensions-dir", manifests])
        defer { kill(host.pid, SIGTERM); _ = try? host.wait() }
        while try !host.readLine().hasPrefix("tether host ready") {}
        let client = try RPCLineClient(socket: LineSocket(connectingTo: group + "/host.sock"))

        let push = #"{"payload":{"title":"Bench"},"budgetMilliseconds":10000}"#
        func deliver() throws {
            let answer = try client.call(HostMethod.push, push)
            guard answer.contains(#""modified":true"#) else {
                throw BenchError.environment("the push was not rewritten: \(answer)")
            }
        }
        let samples = max(5, Int(20 * scale))
        var cold: [UInt64] = []
        for _ in 0..<samples {
            _ = try client.call(HostMethod.extensionStop, #"{"name":"notify"}"#)
            let start = MonotonicClock.nanoseconds()
            try deliver()
            cold.append(MonotonicClock.nanoseconds() - start)
        }
        let warm = try measure(samples: samples * 10, warmup: 5) { try deliver() }
        let warmPercentiles = Percentiles(nanoseconds: warm)
        return [
            BenchResult(name: "push.cold", samples: cold,
                        baselines: ["spawn tether probe to exit": probeBaseline, "push.warm": warmPercentiles]),
            BenchResult(name: "push.warm", samples: warm, baselines: ["spawn tether probe to exit": probeBaseline]),
        ]
    }
}

/// JSON-RPC calls over a LineSocket, skipping the host's notifications.
private final class RPCLineClient {
    let socket: LineSocket
    private var nextID = 0

    init(socket: LineSocket) { self.socket = socket }

    /// The response line to one call (`params` is JSON text).
    func call(_ method: String, _ params: String) throws -> String {
        nextID += 1
        let request = #"{"jsonrpc":"2.0","id":\#(nextID),"method":"\#(method)","params":\#(params)}"# + "\n"
        guard socket.sendOnly(Array(request.utf8)) else { throw BenchError.environment("the host closed the socket") }
        // Bounded: the host sends a few notices per launch, never more than this.
        for _ in 0..<1_000 {
            let line = try socket.nextLine(timeoutMilliseconds: 30_000)
            if line.contains(#""id":\#(nextID)"#) {
                guard !line.contains(#""error""#) else { throw BenchError.environment("\(method) failed: \(line)") }
                return line
            }
        }
        throw BenchError.environment("no answer to \(method)")
    }
}
