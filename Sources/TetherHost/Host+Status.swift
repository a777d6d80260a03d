import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Logging
import TetherAuth
import TetherGroup
import TetherHTTP
import TetherIPC
import TetherLog
import TetherLoop
import TetherManifest

/// `host.status`, `host.metrics` and `extension.list`.
extension Host {
    /// `only`: an extension asking, which sees its own status alone;
    /// `limit`: at most that many listed, all counted.
    func status(limit: Int? = nil, only: String? = nil) -> HostStatus {
        let (extensions, count) = extensionList(limit: limit, only: only)
        return HostStatus(
            pid: pid, since: held?.hostLock?.holder.since ?? "", uptime: Double(uptimeMilliseconds) / 1000,
            group: configuration.group.path, socket: socketPath, extensions: extensions,
            features: features.running,
            // Clients, as `maximumConnections` counts them; extensions' links apart.
            connections: server?.clientCount ?? 0, extensionLinks: server?.pinnedCount ?? 0,
            maximumConnections: effectiveLimits.maximumConnections, replyBudgetBytes: effectiveLimits.replyBudget,
            maximumFeatures: configuration.maximumFeatures, evictedConnections: server?.evictedPeers ?? 0,
            droppedLogLines: LogOutput.standardOutput.droppedLines + LogOutput.standardError.droppedLines,
            desktopNotifications: desktop.status, inputMethod: inputMethodStatus,
            maximumRunningExtensions: launchSlots.capacity, extensionCount: count, cgroups: sandbox?.cgroupsStatus)
    }

    /// `host.metrics`: the counters so far, and what is measured now.
    func metricsText() -> String {
        let snapshot = HostMetrics.Snapshot(
            connections: server?.connections.count ?? 0, evictedConnections: server?.evictedPeers ?? 0,
            droppedLogLines: LogOutput.standardOutput.droppedLines + LogOutput.standardError.droppedLines,
            processes: supervisors.all.compactMap { supervisor in supervisor.pid.map { (supervisor.manifest.name, $0) } },
            features: features.count)
        return metrics.exposition(snapshot, group: configuration.group)
    }

    /// The supervised extensions, then those started by hand and attached
    /// (`only` that one), at most `limit` of them, and how many there are.
    /// Through the indexes by name (a name is attached once): with
    /// thousands running, a status neither copies nor sorts them all.
    func extensionList(limit: Int? = nil, only: String? = nil) -> (list: [ExtensionStatus], count: Int) {
        let byHand = attached.names.filter { supervisors[$0] == nil && (only == nil || $0 == only) }
        let supervised = only.map { name in supervisors[name].map { [$0] } ?? [] } ?? supervisors.all
        let count = supervised.count + byHand.count
        let limit = min(limit ?? count, count)
        var list: [ExtensionStatus] = []
        list.reserveCapacity(limit)
        for supervisor in supervised.prefix(limit) {
            var entry = supervisor.status
            let peer = attachedEntry(named: supervisor.manifest.name)
            entry.attached = peer != nil
            entry.managed = peer?.managed ?? true
            entry.pendingCalls = peer?.pendingCalls ?? 0
            entry.waitingForHello = helloWaiters[supervisor.manifest.name]?.count ?? 0
            if supervisor.pid == nil, let peer { entry.pid = peer.pid }
            list.append(entry)
        }
        guard list.count < limit else { return (list, count) }
        for name in byHand.sorted().prefix(limit - list.count) {
            guard let peer = attachedEntry(named: name) else { continue }
            var entry = peer.status
            entry.state = "attached"
            entry.restarts = 0
            entry.attached = true
            entry.pendingCalls = peer.pendingCalls
            list.append(entry)
        }
        return (list, count)
    }
}
