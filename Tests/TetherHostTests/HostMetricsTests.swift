#if canImport(Glibc)
import Glibc
#endif
import Testing
import TetherGroup
import TetherIPC
import TetherTestSupport
@testable import TetherHost

/// The host's numbers as `host.metrics` prints them (Prometheus text), with
/// no host: what a peer cannot add to them, and what they say once what
/// they count is gone or starts again.
@Suite struct HostMetricsTests {
    let directory: TemporaryDirectory
    let group: GroupDirectory

    init() throws {
        directory = try TemporaryDirectory("tether-metrics")
        group = try GroupDirectory(path: directory.group)
    }

    func text(_ metrics: HostMetrics, evicted: Int = 0, processes: [(name: String, pid: Int32)] = []) -> String {
        metrics.exposition(.init(connections: 0, evictedConnections: evicted, droppedLogLines: 0, processes: processes,
                                 features: 0), group: group)
    }

    /// The sample lines of the series named `name`.
    func samples(_ text: String, _ name: String) -> [String] {
        text.split(separator: "\n").map(String.init).filter { $0.hasPrefix(name + "{") || $0.hasPrefix(name + " ") }
    }

    /// Methods no host answers are counted as one "other": a peer sending
    /// made-up names cannot grow the host's series.
    @Test func unknownMethodsAreOneSeries() {
        let metrics = HostMetrics()
        for index in 0..<100 { metrics.request("made.up.\(index)", error: RPCError.methodNotFound("").code) }
        metrics.request(HostMethod.ping, error: nil)
        let text = text(metrics)
        #expect(samples(text, "tether_rpc_requests_total").sorted()
                == [#"tether_rpc_requests_total{method="host.ping"} 1"#, #"tether_rpc_requests_total{method="other"} 100"#],
                "\(text)")
        #expect(samples(text, "tether_rpc_errors_total")
                == [#"tether_rpc_errors_total{method="other",code="\#(RPCError.methodNotFound("").code)"} 100"#], "\(text)")
    }

    /// A total read from elsewhere (connections evicted) is counted as it
    /// grows; one that starts again is counted on from there, never back.
    @Test func aTotalThatStartsAgainIsCountedOnNotBack() {
        let metrics = HostMetrics()
        _ = text(metrics, evicted: 5)
        _ = text(metrics, evicted: 7)
        let again = text(metrics, evicted: 2)
        #expect(samples(again, "tether_connections_evicted_total") == ["tether_connections_evicted_total 9"], "\(again)")
    }

    /// An extension that no longer runs has no process to measure: its
    /// series go, rather than saying its last numbers forever.
    @Test func aGoneExtensionsProcessSeriesGo() {
        let metrics = HostMetrics()
        let running = text(metrics, processes: [("clock", getpid())])
        #expect(samples(running, "tether_extension_resident_memory_bytes").count == 1, "\(running)")
        #expect(samples(running, "tether_extension_cpu_seconds").count == 1, "\(running)")
        let gone = text(metrics)
        #expect(samples(gone, "tether_extension_resident_memory_bytes").isEmpty, "\(gone)")
        #expect(samples(gone, "tether_extension_cpu_seconds").isEmpty, "\(gone)")
    }

    /// An extension's series start at 0, so a rate has a beginning; the
    /// exits of a stopping host's extensions add none (no one reads them;
    /// made as they came, they were a tenth of a stop of 3,000 once).
    @Test func seriesStartAtZeroAndAStoppingHostAddsNoExits() {
        let metrics = HostMetrics()
        metrics.register(extension: "clock")
        metrics.extensionExited("clock", reason: "crashed")
        metrics.closing = true
        metrics.extensionExited("clock", reason: "stopped")
        let text = text(metrics)
        #expect(samples(text, "tether_extension_launches_total") == [#"tether_extension_launches_total{extension="clock"} 0"#],
                "\(text)")
        #expect(samples(text, "tether_extension_exits_total")
                == [#"tether_extension_exits_total{extension="clock",reason="crashed"} 1"#], "\(text)")
    }

    /// An extension's new series are made at the next exposition, not as
    /// it launches (each costs the registry a copy of its name's others):
    /// what they counted before it is all there, and counts after it add on.
    @Test func whatIsCountedBeforeAnExpositionIsAllThere() {
        let metrics = HostMetrics()
        metrics.register(extension: "clock")
        metrics.extensionLaunched("clock")
        metrics.extensionLaunched("clock")
        metrics.extensionAttached("clock", managed: true)
        metrics.droppedLines("clock", 5)
        let first = text(metrics)
        #expect(samples(first, "tether_extension_launches_total") == [#"tether_extension_launches_total{extension="clock"} 2"#],
                "\(first)")
        #expect(samples(first, "tether_extension_dropped_lines_total")
                == [#"tether_extension_dropped_lines_total{extension="clock"} 5"#], "\(first)")
        metrics.extensionLaunched("clock")
        metrics.extensionAttached("clock", managed: true)
        metrics.extensionAttached("clock", managed: false)
        let second = text(metrics)
        #expect(samples(second, "tether_extension_launches_total") == [#"tether_extension_launches_total{extension="clock"} 3"#],
                "\(second)")
        #expect(samples(second, "tether_extension_attaches_total").sorted()
                == [#"tether_extension_attaches_total{extension="clock",by="hand"} 1"#,
                    #"tether_extension_attaches_total{extension="clock",by="host"} 2"#], "\(second)")
    }
}
