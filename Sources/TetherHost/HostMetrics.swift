import CoreMetrics
#if canImport(Glibc)
import Glibc
#endif
import Prometheus
import TetherAuth
import TetherGroup
import TetherIPC
import TetherLog
import TetherSandbox

/// The host's numbers. The host counts through swift-metrics (any backend
/// could take them); this factory keeps them in a registry of the host's
/// own, which `host.metrics` (`tether metrics`) prints as Prometheus text.
/// Numbers read from elsewhere (procfs, the group's refresh counts, the
/// output's dropped lines) are read when the text is asked for.
/// README's "Metrics" lists every name. Lives on the host's loop.
final class HostMetrics {
    private let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory

    /// Push latency buckets: a push ends within its budget (30 s default),
    /// most within tens of milliseconds.
    static let pushBuckets: [Duration] = [
        .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
        .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10),
        .seconds(30),
    ]

    init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets["tether_push_duration_seconds"] = Self.pushBuckets
        self.factory = factory
    }

    /// Set as the host stops: the numbers are read no more.
    var closing = false

    /// Made once per series: a request costs a dictionary lookup, not the
    /// registry's lock.
    private var counters: [String: CoreMetrics.Counter] = [:]
    private var requestCounters: [String: CoreMetrics.Counter] = [:]

    private static func key(_ name: String, _ labels: [(String, String)]) -> String {
        labels.reduce(name) { "\($0)|\($1.0)=\($1.1)" }
    }

    private func counter(_ name: String, _ labels: [(String, String)] = []) -> CoreMetrics.Counter {
        let key = Self.key(name, labels)
        if let known = counters[key] { return known }
        let made = CoreMetrics.Counter(label: name, dimensions: labels, factory: factory)
        counters[key] = made
        return made
    }

    /// Series of an extension's not made yet, with what they counted: made
    /// at the next exposition, the only reader. Each new series costs the
    /// registry a copy of its name's others (swift-prometheus keeps a
    /// family's series in a dictionary it copies to add one): made at each
    /// launch, the 3,000th launch copied 6,000 entries, and a launch among
    /// 3,000 took a millisecond more (issue 58's last tenth).
    private var unmade: [String: (name: String, labels: [(String, String)], count: Int64)] = [:]

    private func count(_ name: String, _ labels: [(String, String)], by amount: Int64 = 1) {
        let key = Self.key(name, labels)
        if let known = counters[key] { return known.increment(by: amount) }
        unmade[key, default: (name, labels, 0)].count += amount
    }

    private func makeUnmade() {
        for name in unregistered {
            for metric in ["tether_extension_launches_total", "tether_extension_restarts_total",
                           "tether_extension_dropped_lines_total"] {
                count(metric, [("extension", name)], by: 0)
            }
        }
        unregistered = []
        for (key, series) in unmade {
            let made = CoreMetrics.Counter(label: series.name, dimensions: series.labels, factory: factory)
            made.increment(by: series.count)
            counters[key] = made
        }
        unmade = [:]
    }

    private func gauge(_ name: String, _ labels: [(String, String)] = []) -> CoreMetrics.Gauge {
        CoreMetrics.Gauge(label: name, dimensions: labels, factory: factory)
    }

    // MARK: - Extensions

    /// Extensions whose zero series are counted at the next exposition:
    /// their names alone until then, as the host starts.
    private var unregistered: [String] = []

    /// Its series exist at 0 from the first exposition on, so a rate has a
    /// beginning: what a scrape first sees is the same as with series made
    /// at once (3,000 manifests made so: 0.27 s of the host's start).
    func register(extension name: String) {
        unregistered.append(name)
    }

    func extensionLaunched(_ name: String) {
        count("tether_extension_launches_total", [("extension", name)])
    }

    func extensionExited(_ name: String, reason: String) {
        // What a stopping host's extensions end with is read by no one:
        // 3,000 new series kept for nothing (made at once, as they were,
        // 4.5 million entries copied, a tenth of the stop).
        guard !closing else { return }
        count("tether_extension_exits_total", [("extension", name), ("reason", reason)])
    }

    func extensionRestarted(_ name: String) {
        count("tether_extension_restarts_total", [("extension", name)])
    }

    func extensionAttached(_ name: String, managed: Bool) {
        count("tether_extension_attaches_total", [("extension", name), ("by", managed ? "host" : "hand")])
    }

    func extensionUnresponsive(_ name: String) {
        count("tether_extension_unresponsive_total", [("extension", name)])
    }

    func droppedLines(_ name: String, _ count: Int) {
        self.count("tether_extension_dropped_lines_total", [("extension", name)], by: Int64(max(0, count)))
    }

    // MARK: - Pushes

    /// One extension's part of a push: answered, timed out, or failed (it
    /// could not take it); with how long it took.
    func push(_ name: String, outcome: String, milliseconds: UInt64) {
        count("tether_push_deliveries_total", [("extension", name), ("outcome", outcome)])
        CoreMetrics.Timer(label: "tether_push_duration_seconds", dimensions: [("extension", name)], factory: factory)
            .recordMilliseconds(milliseconds)
    }

    // MARK: - The socket

    /// A request, by method (unknown ones as "other"), and its error code if it failed.
    func request(_ method: String, error: Int?) {
        let name = HostMethod.all.contains(method) ? method : "other"
        // The hot path: one lookup by method, no key to build.
        if let known = requestCounters[name] {
            known.increment()
        } else {
            let made = counter("tether_rpc_requests_total", [("method", name)])
            requestCounters[name] = made
            made.increment()
        }
        if let error {
            counter("tether_rpc_errors_total", [("method", name), ("code", String(error))]).increment()
        }
    }

    // MARK: - Read when asked

    struct Snapshot {
        var connections: Int
        var evictedConnections: Int
        /// The host's own output lines dropped for a slow or closed reader.
        var droppedLogLines: Int
        /// Running extensions' main processes.
        var processes: [(name: String, pid: Int32)]
        var features: Int
    }

    /// Counters read from a running total elsewhere: what was last added.
    /// A total that went down started again (its file was removed): counted
    /// on from there.
    private var added: [String: Int64] = [:]

    private func advance(_ name: String, _ labels: [(String, String)], to total: Int64) {
        let key = Self.key(name, labels)
        let before = added[key] ?? 0
        let delta = total >= before ? total - before : total
        counter(name, labels).increment(by: delta)
        added[key] = total
    }

    private var hostCPUSeconds = 0.0
    private var refreshCounts: RefreshCounts?

    /// Names of extensions whose process gauges are set, to remove them when gone.
    private var processGauges: Set<String> = []

    /// The Prometheus text exposition (format 0.0.4).
    func exposition(_ snapshot: Snapshot, group: GroupDirectory) -> String {
        makeUnmade()
        gauge("tether_connections").record(snapshot.connections)
        gauge("tether_features_running").record(snapshot.features)
        advance("tether_connections_evicted_total", [], to: Int64(snapshot.evictedConnections))
        advance("tether_log_lines_dropped_total", [], to: Int64(snapshot.droppedLogLines))
        if refreshCounts == nil { refreshCounts = try? RefreshCounts(group: group) }
        // An outcome that could not be read is skipped, not taken for 0
        // (which would count its whole total again at the next read).
        for (outcome, count) in refreshCounts?.read() ?? [:] {
            advance("tether_token_refreshes_total", [("outcome", outcome.rawValue)], to: count)
        }
        if let own = ProcessStatistics.of(pid: getpid()) {
            gauge("process_resident_memory_bytes").record(own.residentBytes)
            // The host's CPU time only grows: a counter, as Prometheus names it.
            let delta = own.cpuSeconds - hostCPUSeconds
            if delta > 0 {
                CoreMetrics.FloatingPointCounter(label: "process_cpu_seconds_total", dimensions: [], factory: factory)
                    .increment(by: delta)
                hostCPUSeconds = own.cpuSeconds
            }
        }
        if let descriptors = ProcessStatistics.openDescriptors() {
            gauge("process_open_fds").record(descriptors)
        }
        var seen: Set<String> = []
        for (name, pid) in snapshot.processes {
            guard let statistics = ProcessStatistics.of(pid: pid) else { continue }
            seen.insert(name)
            gauge("tether_extension_resident_memory_bytes", [("extension", name)]).record(statistics.residentBytes)
            gauge("tether_extension_cpu_seconds", [("extension", name)]).record(statistics.cpuSeconds)
        }
        // An extension not running has no process to measure: its series go.
        for name in processGauges.subtracting(seen) {
            gauge("tether_extension_resident_memory_bytes", [("extension", name)]).destroy()
            gauge("tether_extension_cpu_seconds", [("extension", name)]).destroy()
        }
        processGauges = seen
        return registry.emitToString()
    }
}
