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
        let ticket: PushDesk<PushDelivery>.Ticket
        switch pushes.admit(ObjectIdentifier(connection), bytes: bytes) {
        case .failure(let refusal):
            logger.warning("push refused (pid \(connection.peer?.pid ?? 0)): \(refusal.message)")
            return respond(.failure(refusal))
        case .success(let (admitted, ending)):
            ticket = admitted
            for room in ending {
                logger.warning("""
                    pushes hold \(room.heldBytes) bytes, the host's limit: \
                    ending the \(room.deliveries.count) of the connection holding the most
                    """)
                for delivery in room.deliveries {
                    delivery.end(.refused("push ended: the host's pushes in flight reached their limit, "
                                          + "and this connection's held the most"))
                }
            }
        }
        // An extension's pushes reach the desktop at its pace (`DesktopPace`); the user's as sent.
        let pusher = extensionPeer(connection)
        let settled: PushDelivery.Respond = { [unowned self] result in
            // Counted until answered: a push waiting for the desktop's
            // server (at most 2 s) still holds its bytes.
            self.pushes.settled(ticket)
            let answer: PushDelivery.Respond = { result in
                self.pushes.answered(ticket)
                respond(result)
            }
            guard case .success(let delivered) = result, !self.isStopping else { return answer(result) }
            self.desktop.show(delivered.delivered, pushedBy: pusher, hiddenBy: { name in
                self.supervisor(named: name)?.manifest.showOnDesktop == false
            }, answered: { display in
                var delivered = delivered
                delivered.desktop = display
                answer(.success(delivered))
            })
        }
        // The attached notification extensions, and the on-demand ones,
        // launched for this push.
        var names = Set(attached.notifications.filter(isUsable).map(\.name))
        if !isStopping {
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
        let delivery = PushDelivery.start(loop: loop, payload: request.payload, budgetMilliseconds: budget, routes: routes,
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
        if let delivery { pushes.attach(delivery, to: ticket) }
    }

    /// Ends every push `sender` has in flight, each answered with `reason`.
    func endPushes(of sender: ObjectIdentifier, _ reason: String) {
        for delivery in pushes.removeEndable(of: sender) { delivery.end(.refused("push ended: \(reason)")) }
    }
}
