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

/// `extension.push`: a notification to each usable notification extension,
/// launched on demand, within its time budget.
extension Host {
    func push(_ params: JSONValue?, respond: @escaping RPCConnection.Respond) {
        guard let payload = params?["payload"], case .object = payload else {
            return respond(.failure(.invalidParams("\"payload\" must be a JSON object")))
        }
        var budget: UInt64?
        if let value = params?["budgetMilliseconds"] {
            guard let milliseconds = value.intValue, milliseconds > 0 else {
                return respond(.failure(.invalidParams("\"budgetMilliseconds\" must be a positive integer")))
            }
            budget = UInt64(milliseconds)
        }
        // The attached notification extensions, and the on-demand ones,
        // launched for this push.
        var names = Set(attached.values.filter { $0.role == .notification && isUsable($0) }.map(\.name))
        if !shuttingDown {
            for supervisor in supervisors where supervisor.manifest.role == .notification && supervisor.isOnDemand
                && !names.contains(supervisor.manifest.name) && supervisor.demand() {
                names.insert(supervisor.manifest.name)
            }
        }
        let routes = names.sorted().map { name in
            // The push counts as work for its idle clock from hand-over to answer.
            var working: ExtensionSupervisor?
            return PushDelivery.Route(name: name, ready: { [unowned self] handOver in
                self.whenAttached(name) { entry in
                    if let entry, entry.managed, let supervisor = self.supervisor(named: name) {
                        working = supervisor
                        supervisor.noteWork(began: true)
                    }
                    handOver(entry)
                }
            }, settled: {
                working?.noteWork(began: false)
                working = nil
            })
        }
        let logger = self.logger
        PushDelivery.start(loop: loop, payload: payload, budgetMilliseconds: budget, routes: routes,
                           report: { [unowned self] name, outcome, milliseconds, modified in
            self.metrics.push(self.metricLabel(name), outcome: outcome.rawValue, milliseconds: milliseconds)
            let metadata: Logger.Metadata = ["extension": .string(name), "outcome": .string(outcome.rawValue),
                                             "durationMs": .number(milliseconds), "modified": .bool(modified)]
            if outcome == .timedOut {
                logger.event(.pushTimedOut, level: .warning,
                             "push: '\(name)' ran out of its time budget (\(milliseconds) ms); the original content was delivered",
                             metadata)
            } else {
                logger.event(.pushDelivered, "push: delivered through '\(name)' in \(milliseconds) ms"
                             + (outcome == .failed ? " (it could not take it; the original content)" : ""), metadata)
            }
        }, respond: respond)
    }
}
