import TetherIPC

/// The pushes the host holds, counted per sender (the connection that sent
/// `push.send`) and in total (invariant 22). Running totals: admitting a
/// push costs the same however many peers there are. Lives on the host's loop.
struct PushLedger {
    struct Limits: Sendable {
        /// Pushes one connection may have in flight.
        var pushesPerSender = 8
        /// Payload bytes (as they travel on) one connection may have in flight.
        var bytesPerSender = 4 << 20
        /// Payload bytes in flight across every connection.
        var totalBytes = 32 << 20
    }

    struct Held {
        var pushes = 0
        var bytes = 0
    }

    let limits: Limits
    private(set) var held: [ObjectIdentifier: Held] = [:]
    private(set) var totalBytes = 0

    init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Why `sender` may not have one more push of `bytes`, by its own
    /// ceilings (the total is the host's to make room in: `largestHolder`).
    func refusal(_ sender: ObjectIdentifier, bytes: Int) -> RPCError? {
        let mine = held[sender] ?? Held()
        if mine.pushes >= limits.pushesPerSender {
            return .refused("this connection has \(mine.pushes) pushes in flight, its limit; wait for their answers")
        }
        if mine.bytes + bytes > limits.bytesPerSender {
            return .refused("this connection's pushes in flight would hold \(mine.bytes + bytes) bytes of payload, "
                            + "over its limit of \(limits.bytesPerSender); wait for their answers")
        }
        return nil
    }

    /// Whether `bytes` more fit under the total.
    func fits(_ bytes: Int) -> Bool { totalBytes + bytes <= limits.totalBytes }

    /// The sender holding the most bytes, if it holds more than `sender`
    /// would with `bytes` more: whose pushes go first when the total is
    /// reached, so a small push is never refused behind a large holder.
    func largestHolder(over sender: ObjectIdentifier, adding bytes: Int) -> ObjectIdentifier? {
        guard let largest = held.max(by: { $0.value.bytes < $1.value.bytes }), largest.key != sender,
              largest.value.bytes > (held[sender]?.bytes ?? 0) + bytes else { return nil }
        return largest.key
    }

    mutating func charge(_ sender: ObjectIdentifier, bytes: Int) {
        held[sender, default: Held()].pushes += 1
        held[sender, default: Held()].bytes += bytes
        totalBytes += bytes
    }

    mutating func release(_ sender: ObjectIdentifier, bytes: Int) {
        guard var mine = held[sender] else { return }
        mine.pushes -= 1
        mine.bytes -= bytes
        totalBytes -= bytes
        held[sender] = mine.pushes > 0 ? mine : nil
    }
}
