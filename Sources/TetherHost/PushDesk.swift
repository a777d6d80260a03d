import TetherIPC

/// The pushes in flight, one owner from request to answer (invariant 22):
/// what each sender holds (`PushLedger`) and the deliveries that can still
/// be ended, so a sender that goes, or holds the most when the total is
/// reached, has its pushes ended. It decides and returns what to end; the
/// host ends them. Generic over the delivery, so it is tested without
/// processes. Lives on the host's loop.
struct PushDesk<Delivery: AnyObject> {
    /// One push, from admission to answer.
    struct Ticket: Hashable, Sendable {
        fileprivate let number: Int
    }

    /// A sender's pushes ended to make room for another's.
    struct Ending {
        /// What every push held when the total was reached.
        let heldBytes: Int
        let deliveries: [Delivery]
    }

    private struct Held {
        let sender: ObjectIdentifier
        let bytes: Int
        /// Nil before the delivery starts, and once it has settled: it is
        /// then waiting for the desktop, and can no longer be ended.
        var delivery: Delivery?
        var settled = false
    }

    private(set) var ledger: PushLedger
    private var tickets: [Int: Held] = [:]
    private var nextTicket = 0

    init(limits: PushLedger.Limits = PushLedger.Limits()) {
        ledger = PushLedger(limits: limits)
    }

    /// Takes one push of `bytes` from `sender`, by its own ceilings, then
    /// by the total: past it, the largest holders' pushes that can still be
    /// ended make room (returned, to be ended; their bytes are free at
    /// once), so a small push is never refused behind a large holder.
    /// Refused, nothing is ended.
    mutating func admit(_ sender: ObjectIdentifier, bytes: Int) -> Result<(Ticket, ending: [Ending]), RPCError> {
        if let refusal = ledger.refusal(sender, bytes: bytes) { return .failure(refusal) }
        guard !ledger.fits(bytes) else { return .success((take(sender, bytes: bytes), [])) }
        // Room is made on a copy, kept only if it is made in full.
        var trial = self
        var ending: [Ending] = []
        while !trial.ledger.fits(bytes) {
            let heldBytes = trial.ledger.totalBytes
            guard let largest = trial.ledger.largestHolder(over: sender, adding: bytes),
                  case let ended = trial.removeEndable(of: largest), !ended.isEmpty else {
                return .failure(.refused("the host holds \(ledger.totalBytes) bytes of pushes in flight, "
                                         + "its limit; try again when they are answered"))
            }
            ending.append(Ending(heldBytes: heldBytes, deliveries: ended))
        }
        let ticket = trial.take(sender, bytes: bytes)
        self = trial
        return .success((ticket, ending))
    }

    private mutating func take(_ sender: ObjectIdentifier, bytes: Int) -> Ticket {
        ledger.charge(sender, bytes: bytes)
        let ticket = Ticket(number: nextTicket)
        tickets[ticket.number] = Held(sender: sender, bytes: bytes)
        nextTicket += 1
        return ticket
    }

    /// The delivery `ticket`'s push travels by, once started (if it has
    /// not settled meanwhile).
    mutating func attach(_ delivery: Delivery, to ticket: Ticket) {
        guard tickets[ticket.number]?.settled == false else { return }
        tickets[ticket.number]?.delivery = delivery
    }

    /// Its extensions are done: it can no longer be ended, and still holds
    /// its bytes until answered (the desktop may take up to 2 s).
    mutating func settled(_ ticket: Ticket) {
        tickets[ticket.number]?.settled = true
        tickets[ticket.number]?.delivery = nil
    }

    /// Answered: its bytes are free.
    mutating func answered(_ ticket: Ticket) {
        guard let held = tickets.removeValue(forKey: ticket.number) else { return }
        ledger.release(held.sender, bytes: held.bytes)
    }

    /// Every push of `sender` that can still be ended (its delivery under
    /// way), off the desk with its bytes: the caller ends them (their
    /// answers change nothing here). A sender holding nothing costs a lookup.
    mutating func removeEndable(of sender: ObjectIdentifier) -> [Delivery] {
        guard ledger.held[sender] != nil else { return [] }
        var ended: [Delivery] = []
        for (number, held) in tickets where held.sender == sender {
            guard let delivery = held.delivery else { continue }
            tickets[number] = nil
            ledger.release(sender, bytes: held.bytes)
            ended.append(delivery)
        }
        return ended
    }
}
