import FoundationEssentials
import Glibc
import TetherGroup
import TetherJSON

/// What an install and an extension weigh, against flock(1) and against the
/// same extension with nothing to fetch:
/// - footprint.tether.size, footprint.example-widget.size (MiB) and their
///   `.libraries` (shared libraries `ldd` lists, the vDSO left out);
/// - footprint.extension.threads and footprint.extension.rss (MiB):
///   example-widget once idle after one fetch of orders with a token it had
///   to refresh first (HTTP on its own loop: the goal is one thread), against
///   the same widget showing the clock alone.
struct FootprintBenchmark {
    let scratch: BenchScratch, scale: Double

    func run() throws -> [BenchResult] {
        let flock = "/usr/bin/flock"
        var results: [BenchResult] = []
        for (name, path) in [("tether", scratch.tools.tether), ("example-widget", scratch.tools.bin + "/example-widget")]
        where access(path, X_OK) == 0 {
            let size = Self.mebibytes(path), libraries = try Self.sharedLibraries(path)
            results.append(BenchResult(name: "footprint.\(name).size", unit: "MiB", p50: size, p99: size, samples: 1,
                                       baselines: ["flock(1)": Percentiles(p50: Self.mebibytes(flock), p99: Self.mebibytes(flock))]))
            let flockLibraries = try Self.sharedLibraries(flock)
            results.append(BenchResult(name: "footprint.\(name).libraries", unit: "count", p50: libraries, p99: libraries,
                                       samples: 1, baselines: ["flock(1)": Percentiles(p50: flockLibraries, p99: flockLibraries)]))
        }
        if let afterFetch = try extensionAfterFetch() { results += afterFetch }
        return results
    }

    /// example-widget by hand (no host: it refreshes itself, coordinated),
    /// with and without an orders URL; threads and RSS once idle.
    private func extensionAfterFetch() throws -> [BenchResult]? {
        let widget = scratch.tools.bin + "/example-widget"
        guard access(widget, X_OK) == 0, scratch.tools.authServer != nil else { return nil }
        let server = try BenchAuthServer(scratch: scratch)
        var figures: [Bool: (threads: Double, rss: Double)] = [:]
        for fetching in [true, false] {
            let group = try openGroup(scratch.path + "/footprint-\(fetching ? "fetch" : "clock")")
            try server.loginExpired(group)
            if fetching { try SharedStore.defaults(in: group).set(.string(server.baseURL + "/orders"), forKey: "orders.url") }
            let process = try BenchProcess([widget, "--group", group.path, "--name", "footprint", "--entries", "1",
                                            "--policy", "never"], quietStderr: true)
            defer { kill(process.pid, SIGKILL); _ = try? process.wait() }
            let shown = try process.readUntil { $0.contains("shows:") }
            if fetching, !shown.contains("orders: 1") {
                throw BenchError.environment("the widget did not show its orders: \(shown)")
            }
            // Idle threads of Swift's shared pool end on their own after a
            // few seconds: the measurement is what is left once they could.
            var threads = Self.threads(of: process.pid)
            for _ in 0..<Int(max(10, 40 * scale)) where threads > 1 {
                sleepSeconds(0.25)
                threads = Self.threads(of: process.pid)
            }
            figures[fetching] = (Double(threads), Double(residentMemory(of: process.pid)) / 1_048_576)
        }
        let fetched = figures[true] ?? (0, 0), clock = figures[false] ?? (0, 0)
        return [
            BenchResult(name: "footprint.extension.threads", unit: "threads", p50: fetched.threads, p99: fetched.threads,
                        samples: 1, baselines: ["the same widget, nothing fetched": Percentiles(p50: clock.threads, p99: clock.threads)]),
            BenchResult(name: "footprint.extension.rss", unit: "MiB", p50: fetched.rss, p99: fetched.rss, samples: 1,
                        baselines: ["the same widget, nothing fetched": Percentiles(p50: clock.rss, p99: clock.rss)]),
        ]
    }

    static func mebibytes(_ path: String) -> Double {
        var info = stat()
        return stat(path, &info) == 0 ? Double(info.st_size) / 1_048_576 : 0
    }

    /// The shared libraries `ldd` lists for `path` (0 for a static one).
    static func sharedLibraries(_ path: String) throws -> Double {
        let process = try BenchProcess(["/usr/bin/ldd", path], quietStderr: true)
        var count = 0
        while let line = try? process.readLine() {
            if line.contains("=>") || line.contains("ld-linux"), !line.contains("linux-vdso") { count += 1 }
        }
        _ = try? process.wait()
        return Double(count)
    }

    /// Threads: in /proc/PID/status.
    static func threads(of pid: pid_t) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("Threads:") } ?? ""
        return line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap { Int($0) } ?? 0
    }
}
