import Foundation
import Testing
import TetherTestSupport

/// A branch of the refresh broker only processes show: overlapping
/// processes share one slow refresh. (The broker's other branches are
/// `TokenBrokerTests`', in-process.)
@Suite(.timed) struct TokenBrokerBranchTests {
    /// With a slow server, the processes truly overlap: every task in every
    /// process waits on the one refresh in flight, and one refresh serves all.
    @Test func aSlowRefreshIsSharedByEveryOverlappingProcess() throws {
        let group = try TestGroup()
        let server = try DemoServer(in: group.dir)
        try server.loginExpired(group)
        try server.post("/admin/faults", ["latencyMs": 600, "latencyCount": 1])
        let reports = try group.storm(processes: 4, tasks: 16)
        let tokens = Set(reports.flatMap { $0["tokens"] as? [String] ?? [] })
        let shortestWait = reports.compactMap { ($0["waitsMs"] as? [Double])?.first }.min() ?? 0
        #expect(tokens.count == 1 && tokens.allSatisfy { !$0.hasPrefix("error") }, "\(tokens)")
        // Each task waited for the slow answer: the processes overlapped it.
        #expect(shortestWait >= 400, "the fastest task took \(shortestWait) ms")
        let counters = try server.counters()
        #expect(counters["refreshes"] == 1 && counters["reuseDetected"] == 0, "\(counters)")
    }
}
