import FoundationEssentials
import Glibc
import TetherLoop

/// p50 and p99 of a set of samples, in microseconds.
struct Percentiles: Encodable {
    let p50: Double
    let p99: Double

    init(p50: Double, p99: Double) {
        self.p50 = p50
        self.p99 = p99
    }

    init(nanoseconds samples: [UInt64]) {
        self = Percentiles(values: samples).scaled(by: 1.0 / 1_000)  // ns → µs
    }

    /// Percentiles of values in their own unit (KiB, say).
    init(values samples: [UInt64]) {
        let sorted = samples.sorted()
        func at(_ fraction: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            let index = min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.down)))
            return Double(sorted[index])
        }
        p50 = at(0.50)
        p99 = at(0.99)
    }

    /// The same percentiles in another unit.
    func scaled(by factor: Double) -> Percentiles { Percentiles(p50: p50 * factor, p99: p99 * factor) }
}

/// One benchmark and its baselines, measured in the same run (the contract in docs/performance.md).
struct BenchResult: Encodable {
    let name: String
    let unit: String
    let p50: Double
    let p99: Double
    let samples: Int
    let baselines: [String: Percentiles]
    /// Event counts beside the timings (refreshes, reuse detections), per contender.
    let counts: [String: [String: Int]]?

    /// A figure in another unit (a rate, a size), already reduced to p50 and p99.
    init(name: String, unit: String, p50: Double, p99: Double, samples: Int, baselines: [String: Percentiles] = [:],
         counts: [String: [String: Int]]? = nil) {
        self.name = name
        self.unit = unit
        self.p50 = p50
        self.p99 = p99
        self.samples = samples
        self.baselines = baselines
        self.counts = counts
    }

    init(name: String, samples: [UInt64], baselines: [String: Percentiles]) {
        let stats = Percentiles(nanoseconds: samples)
        self.name = name
        self.unit = "us"
        self.p50 = stats.p50
        self.p99 = stats.p99
        self.samples = samples.count
        self.baselines = baselines
        self.counts = nil
    }
}

struct BenchReport: Encodable {
    let machine: MachineInfo
    let benchmarks: [BenchResult]

    func printTable() {
        output("machine: \(machine.cpus) CPUs, \(machine.model), Linux \(machine.kernel)")
        output(pad("benchmark", 40) + pad("unit", 8) + pad("p50", 12) + pad("p99", 12) + "samples")
        var shown: Set<String> = []
        for result in benchmarks {
            output(pad(result.name, 40) + pad(result.unit, 8) + pad(format(result.p50), 12) + pad(format(result.p99), 12)
                   + "\(result.samples)")
            // Benchmarks of one family share their baselines: list each once
            // (a baseline measured another way, its CPU or memory, is another).
            for (name, stats) in result.baselines.sorted(by: { $0.key < $1.key })
            where shown.insert("\(name) \(stats.p50) \(stats.p99)").inserted {
                output(pad("  baseline: \(name)", 48) + pad(format(stats.p50), 12) + format(stats.p99))
            }
            for (who, figures) in (result.counts ?? [:]).sorted(by: { $0.key < $1.key }) {
                output("  counts: \(who): " + figures.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
            }
        }
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }

    private func format(_ value: Double) -> String { fixed(value, 3) }
}

struct MachineInfo: Encodable {
    let cpus: Int
    let model: String
    let kernel: String

    static func current() -> MachineInfo {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .flatMap { $0.split(separator: ":", maxSplits: 1).last }
            .map { $0.trimmed } ?? "unknown CPU"
        var names = utsname()
        uname(&names)
        let kernel = withUnsafeBytes(of: &names.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return MachineInfo(cpus: ProcessInfo.processInfo.activeProcessorCount, model: model, kernel: kernel)
    }
}


/// Times `body` once per sample, after a warm-up.
func measure(samples: Int, warmup: Int = 200, _ body: () throws -> Void) rethrows -> [UInt64] {
    for _ in 0..<warmup { try body() }
    var result = [UInt64](repeating: 0, count: samples)
    for index in 0..<samples {
        let start = MonotonicClock.nanoseconds()
        try body()
        result[index] = MonotonicClock.nanoseconds() - start
    }
    return result
}

/// A private group directory for the run, removed afterwards.
final class BenchScratch {
    let path: String
    let tools: BenchTools

    init(tools: BenchTools) throws {
        self.tools = tools
        var template = Array("/tmp/tether-bench.XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ $0.baseAddress.flatMap { mkdtemp($0) } }) else {
            throw BenchError.environment("cannot create a scratch directory in /tmp: \(String(cString: strerror(errno)))")
        }
        path = String(cString: made)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}
