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
    func status() -> JSONValue {
        let uptime = Double(loop.now - startedAt) / 1000
        return [
            "pid": .integer(pid),
            "since": .string(hostLock?.holder.since ?? ""),
            "uptime": .double(uptime),
            "group": .string(configuration.group.path),
            "socket": .string(socketPath),
            "extensions": .array(extensionList()),
            "features": .array(features.keys.sorted().map { .string($0) }),
            // Clients, as `maximumConnections` counts them; extensions' links apart.
            "connections": .integer(server?.clientCount ?? 0),
            "extensionLinks": .integer(server?.pinnedCount ?? 0),
            "limits": [
                "maximumConnections": .integer(effectiveLimits.maximumConnections),
                "replyBudgetBytes": .integer(effectiveLimits.replyBudget),
                "maximumFeatures": .integer(configuration.maximumFeatures),
            ],
            "evictedConnections": .integer(server?.evictedPeers ?? 0),
            // Lines of the host's own output dropped for a slow or closed reader.
            "droppedLogLines": .integer(LogOutput.standardOutput.droppedLines
                                              + LogOutput.standardError.droppedLines),
        ]
    }

    /// `host.metrics`: the counters so far, and what is measured now.
    func metricsText() -> String {
        let snapshot = HostMetrics.Snapshot(
            connections: server?.connections.count ?? 0, evictedConnections: server?.evictedPeers ?? 0,
            droppedLogLines: LogOutput.standardOutput.droppedLines + LogOutput.standardError.droppedLines,
            processes: supervisors.compactMap { supervisor in supervisor.pid.map { (supervisor.manifest.name, $0) } },
            features: features.count)
        return metrics.exposition(snapshot, group: configuration.group)
    }

    /// The supervised extensions, then those started by hand and attached.
    func extensionList() -> [JSONValue] {
        let byName = Dictionary(attached.values.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var list: [JSONValue] = supervisors.map { supervisor in
            var entry = supervisor.statusJSON
            let peer = byName[supervisor.manifest.name]
            entry = entry.merging(["attached": .bool(peer != nil), "managed": .bool(peer?.managed ?? true),
                                   "pendingCalls": .integer(peer?.pendingCalls ?? 0),
                                   "waitingForHello": .integer(helloWaiters[supervisor.manifest.name]?.count ?? 0)])
            if supervisor.pid == nil, let peer { entry = entry.merging(["pid": .integer(peer.pid)]) }
            return entry
        }
        let supervised = Set(supervisors.map(\.manifest.name))
        for peer in byName.values.sorted(by: { $0.name < $1.name }) where !supervised.contains(peer.name) {
            list.append(peer.json.merging(["state": "attached", "restarts": 0, "attached": true,
                                           "pendingCalls": .integer(peer.pendingCalls)]))
        }
        return list
    }
}
