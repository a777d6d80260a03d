import FoundationEssentials
import Glibc
import TetherGroup
import TetherJSON
import TetherLoop

/// defaults.notify: from the start of a write in this process until another
/// process (`tether defaults watch`) reports the change on its stdout. The
/// write alone (lock, temp file, fsync, rename, fsync of the directory) is
/// the baseline: the watcher hears the rename before the write returns.
struct DefaultsBenchmark {
    let scratch: BenchScratch, scale: Double

    func run() throws -> [BenchResult] {
        let group = try GroupDirectory(path: scratch.path + "/defaults")
        let store = try SharedStore.defaults(in: group)
        let watcher = try BenchProcess([scratch.tools.tether, "defaults", "watch", "--group", group.path])
        _ = try watcher.readUntil { $0.hasPrefix("watching") }
        let iterations = max(20, Int(500 * scale))
        var notify: [UInt64] = []
        var writes: [UInt64] = []
        for index in 0..<iterations {
            let start = MonotonicClock.nanoseconds()
            try store.set(.integer(index), forKey: "bench.counter")
            let written = MonotonicClock.nanoseconds()
            _ = try watcher.readUntil { $0 == "changed: bench.counter" }
            notify.append(MonotonicClock.nanoseconds() - start)
            writes.append(written - start)
        }
        return [BenchResult(name: "defaults.notify", samples: notify,
                            baselines: ["the atomic write itself": Percentiles(nanoseconds: writes)])]
    }
}
