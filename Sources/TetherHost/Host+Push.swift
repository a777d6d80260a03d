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
    func push(from connection: RPCConnection, _ request: PushRequest, respond: @escaping PushDelivery.Respond) {
        let budget = request.budgetMilliseconds
        // What it holds is counted as it travels on to each extension.
        let bytes = JSONCodec.serialize(.object(request.payload)).count
        let sender = ObjectIdentifier(connection)
        if let refusal = pushLedger.refusal(sender, bytes: bytes) {
            logger.warning("push refused (pid \(connection.peer?.pid ?? 0)): \(refusal.message)")
            return respond(.failure(refusal))
        }
        // Past the total, the largest holder's pushes make room: a small
        // push is never refused behind a large one.
        while !pushLedger.fits(bytes) {
            guard let largest = pushLedger.largestHolder(over: sender, adding: bytes), pushesBySender[largest] != nil else {
                return respond(.failure(.refused("the host holds \(pushLedger.totalBytes) bytes of pushes in flight, "
                                                 + "its limit; try again when they are answered")))
            }
            let count = pushLedger.held[largest]?.pushes ?? 0
            logger.warning("pushes hold \(pushLedger.totalBytes) bytes, the host's limit: ending the \(count) of the connection holding the most")
            endPushes(of: largest, "the host's pushes in flight reached their limit, and this connection's held the most")
        }
        pushLedger.charge(sender, bytes: bytes)
        // An extension's pushes reach the desktop at its pace (`DesktopPace`); the user's as sent.
        let pusher = extensionPeer(connection)
        var delivery: PushDelivery?
        let settled: PushDelivery.Respond = { [unowned self] result in
            if let delivery { self.pushesBySender[sender]?[ObjectIdentifier(delivery)] = nil }
            if self.pushesBySender[sender]?.isEmpty == true { self.pushesBySender[sender] = nil }
            // Counted until answered: a push waiting for the desktop's
            // server (at most 2 s) still holds its bytes.
            let answer: PushDelivery.Respond = { result in
                self.pushLedger.release(sender, bytes: bytes)
                respond(result)
            }
            guard case .success(let delivered) = result, !self.shuttingDown else { return answer(result) }
            self.showDelivered(delivered, pushedBy: pusher, respond: answer)
        }
        // The attached notification extensions, and the on-demand ones,
        // launched for this push.
        var names = Set(attached.notifications.filter(isUsable).map(\.name))
        if !shuttingDown {
            for supervisor in supervisors.notifications where supervisor.isOnDemand
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
        delivery = PushDelivery.start(loop: loop, payload: request.payload, budgetMilliseconds: budget, routes: routes,
                           report: { [unowned self] name, outcome, milliseconds, modified in
            self.metrics.push(self.metricLabel(name), outcome: outcome.rawValue, milliseconds: milliseconds)
            let metadata: Logger.Metadata = ["extension": .string(name), "outcome": .string(outcome.rawValue),
                                             "durationMs": .number(milliseconds), "modified": .bool(modified)]
            if outcome == .busy {
                logger.event(.pushTimedOut, level: .warning,
                             "push: '\(name)' has \(PushDelivery.maximumUnansweredPerExtension) pushes unanswered, its limit; "
                             + "the original content was delivered", metadata)
            } else if outcome == .timedOut {
                logger.event(.pushTimedOut, level: .warning,
                             "push: '\(name)' ran out of its time budget (\(milliseconds) ms); the original content was delivered",
                             metadata)
            } else {
                logger.event(.pushDelivered, "push: delivered through '\(name)' in \(milliseconds) ms"
                             + (outcome == .failed ? " (it could not take it; the original content)" : ""), metadata)
            }
        }, respond: settled)
        if let delivery { pushesBySender[sender, default: [:]][ObjectIdentifier(delivery)] = delivery }
    }

    /// Ends every push `sender` has in flight, each answered with `reason`.
    func endPushes(of sender: ObjectIdentifier, _ reason: String) {
        guard let deliveries = pushesBySender.removeValue(forKey: sender) else { return }
        for delivery in deliveries.values { delivery.end(.refused("push ended: \(reason)")) }
    }
}
