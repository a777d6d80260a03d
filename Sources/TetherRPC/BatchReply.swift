/// Collects a batch's responses in member order and hands them over once
/// every request in it is answered (and the batch has been read through).
final class BatchReply {
    private var slots: [RPCMessage?]
    private var outstanding = 0
    private var sealed = false
    private var done: (([RPCMessage]) -> Void)?

    init(count: Int, done: @escaping ([RPCMessage]) -> Void) {
        slots = Array(repeating: nil, count: count)
        self.done = done
    }

    func expect() { outstanding += 1 }

    /// A request's response (each request answers once).
    func answer(_ slot: Int, _ response: RPCMessage) {
        slots[slot] = response
        outstanding -= 1
        finishIfComplete()
    }

    /// An invalid member's error.
    func refuse(_ slot: Int, _ response: RPCMessage) {
        slots[slot] = response
    }

    func seal() {
        sealed = true
        finishIfComplete()
    }

    private func finishIfComplete() {
        guard sealed, outstanding == 0, let done else { return }
        self.done = nil
        done(slots.compactMap { $0 })
    }
}
