import Foundation
import Testing
import TetherSandbox
import TetherTestSupport

/// `tether bench` runs the tether-bench built next to it.
@Suite(.timed) struct BenchCommandTests {
    func bench(_ arguments: [String]) throws -> CommandResult {
        try tether(["bench"] + arguments, timeout: 170)
    }

    /// The JSON contract of `bench --json`, with a small sample count. Speed
    /// goals are read off the real run, not asserted here.
    @Test func jsonCarriesEveryBenchmarkWithItsBaselines() throws {
        let result = try bench(["probe", "watch", "--json", "--scale", "0.05"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["machine"] is [String: Any])
        let benchmarks = try #require(object["benchmarks"] as? [[String: Any]])
        let names = benchmarks.compactMap { $0["name"] as? String }
        #expect(names == ["probe.idle", "probe.held", "probe.held+holder", "probe.kept.idle", "probe.kept.held",
                          "watch.kill9"])
        for benchmark in benchmarks {
            #expect(benchmark["unit"] as? String == "us")
            let p50 = try #require(benchmark["p50"] as? Double)
            let p99 = try #require(benchmark["p99"] as? Double)
            #expect(p50 > 0 && p99 >= p50)
            let baselines = try #require(benchmark["baselines"] as? [String: [String: Double]])
            #expect(!baselines.isEmpty)
            for (_, stats) in baselines { #expect(stats["p50"] != nil && stats["p99"] != nil) }
        }
        let probe = try #require(benchmarks.first?["baselines"] as? [String: Any])
        #expect(Set(probe.keys) == ["open+flock+close", "kill(pid,0) from pid file", "unix socket ping/pong",
                                    "spawn flock -n"])
    }

    @Test func hostAndIPCBenchmarksReportTheirFigures() throws {
        let result = try bench(["host", "ipc", "--json", "--scale", "0.05"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let benchmarks = try #require(object["benchmarks"] as? [[String: Any]])
        let byName = Dictionary(uniqueKeysWithValues: benchmarks.compactMap { item in
            (item["name"] as? String).map { ($0, item) }
        })
        #expect(Set(byName.keys) == Set<String>(["host.attach", "host.restart", "host.idle-cpu", "host.idle-wakeups", "host.rss",
                                     "host.status.under-spam", "host.cpu.under-spam", "host.rss.after-abuse",
                                     "ipc.roundtrip", "ipc.roundtrip.one-cpu", "ipc.throughput", "push.cold", "push.warm",
                                     "launch.confined", "sandbox.syscall"])
                    .union(ExtensionWorld.unavailable == nil ? ["launch.world"] : []))
        let syscall = try #require(byName["sandbox.syscall"]?["baselines"] as? [String: [String: Double]])
        #expect(syscall["the same calls without a filter"]?["p50"] ?? 0 > 0, "\(syscall)")
        let launch = try #require(byName["launch.confined"]?["baselines"] as? [String: [String: Double]])
        #expect(launch["the same launch unconfined"]?["p50"] ?? 0 > 0)
        #expect((byName["launch.confined"]?["p50"] as? Double ?? 0) > 0)
        let cold = try #require(byName["push.cold"]?["baselines"] as? [String: [String: Double]])
        #expect(cold["spawn tether probe to exit"]?["p50"] ?? 0 > 0)
        #expect(cold["push.warm"]?["p50"] ?? 0 > 0)
        #expect(byName["host.cpu.under-spam"]?["unit"] as? String == "%")
        let spam = try #require(byName["host.status.under-spam"]?["baselines"] as? [String: [String: Double]])
        #expect(spam["host.status idle"]?["p50"] ?? 0 > 0)
        #expect(byName["host.rss"]?["unit"] as? String == "MiB")
        #expect(byName["ipc.throughput"]?["unit"] as? String == "req/s")
        #expect((byName["ipc.throughput"]?["p50"] as? Double ?? 0) > 0)
        #expect((byName["host.attach"]?["p50"] as? Double ?? 0) > 0)
        let raw = try #require(byName["ipc.roundtrip"]?["baselines"] as? [String: [String: Double]])
        #expect(raw["raw unix socket ping/pong"]?["p50"] ?? 0 > 0)
    }

    @Test func cliBenchmarkSetsWholeCommandsAgainstFlockAndTrue() throws {
        let result = try bench(["cli", "--json", "--scale", "0.05"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let benchmarks = try #require(object["benchmarks"] as? [[String: Any]])
        let byName = Dictionary(uniqueKeysWithValues: benchmarks.compactMap { item in
            (item["name"] as? String).map { ($0, item) }
        })
        var expected: Set<String> = ["cli.extension-start"]
        for command in ["cli.probe", "cli.hold", "cli.watch"] { expected.formUnion([command, command + ".cpu", command + ".peak-rss"]) }
        #expect(Set(byName.keys) == expected)
        for name in ["cli.probe", "cli.hold.cpu", "cli.watch.peak-rss"] {
            let baselines = try #require(byName[name]?["baselines"] as? [String: [String: Double]])
            #expect(Set(baselines.keys) == ["flock -n FILE true", "/bin/true"], "\(name)")
            #expect((baselines["flock -n FILE true"]?["p50"] ?? 0) > 0 && (byName[name]?["p50"] as? Double ?? 0) > 0, "\(name)")
        }
        #expect(byName["cli.probe.peak-rss"]?["unit"] as? String == "KiB")
        let start = try #require(byName["cli.extension-start"]?["baselines"] as? [String: [String: Double]])
        #expect((start["/bin/true"]?["p50"] ?? 0) > 0 && (byName["cli.extension-start"]?["p50"] as? Double ?? 0) > 0)
    }

    @Test func unknownBenchmarkIsBadUsage() throws {
        let result = try bench(["nonsense"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("nonsense"))
    }
}
