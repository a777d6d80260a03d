import TetherIPC
import TetherLoop

/// One push on its way through the notification extensions. Each gets the
/// payload and a time budget; whatever has not answered by the budget (plus
/// a second of slack for the extension's own timer) delivers the original
/// content, as iOS does. Lives on the host's loop.
final class PushDelivery {
    static let defaultBudgetMilliseconds: UInt64 = 30_000
    static let slackMilliseconds: UInt64 = 1_000

    private let payload: JSONValue
    private var results: [JSONValue?]
    private var remaining: Int
    private var timers: [LoopTimer] = []
    /// The call to each extension, cancelled when its budget runs out: an
    /// extension that never answers leaves nothing (payload included) behind.
    private var calls: [JSONValue?] = []
    private var respond: RPCConnection.Respond?

    private init(payload: JSONValue, count: Int, respond: @escaping RPCConnection.Respond) {
        self.payload = payload
        self.results = Array(repeating: nil, count: count)
        self.calls = Array(repeating: nil, count: count)
        self.remaining = count
        self.respond = respond
    }

    /// Delivers `payload` through `targets` and answers `respond` with
    /// `{"delivered": [{extension, content, modified, timedOut}]}`.
    static func start(loop: EventLoop, payload: JSONValue, budgetMilliseconds: UInt64?,
                      targets: [AttachedExtension], respond: @escaping RPCConnection.Respond) {
        guard !targets.isEmpty else {
            // No service extension: the original is what gets delivered.
            return respond(.success(["delivered": [["extension": nil, "content": payload,
                                                    "modified": false, "timedOut": false]]]))
        }
        let delivery = PushDelivery(payload: payload, count: targets.count, respond: respond)
        for (index, target) in targets.enumerated() {
            let budget = budgetMilliseconds ?? target.timeBudgetMilliseconds ?? defaultBudgetMilliseconds
            let timer = LoopTimer(loop: loop)
            delivery.timers.append(timer)
            // The delivery lives as long as one of its timers or calls does.
            timer.start(afterMilliseconds: budget + slackMilliseconds) {
                delivery.finish(index, target, content: nil, timedOut: true)
            }
            delivery.calls[index] = target.connection.call(ExtensionMethod.receivePush,
                                   ["payload": payload, "budgetMilliseconds": .integer(budget)]) { result in
                switch result {
                case .success(let answer):
                    let content = answer["content"].flatMap { if case .object = $0 { $0 } else { nil } }
                    delivery.finish(index, target, content: content, timedOut: answer["timedOut"]?.boolValue ?? false)
                case .failure:
                    delivery.finish(index, target, content: nil, timedOut: false)
                }
            }
        }
    }

    private func finish(_ index: Int, _ target: AttachedExtension, content: JSONValue?, timedOut: Bool) {
        guard results[index] == nil else { return }
        timers[index].close()
        if timedOut, let id = calls[index] { target.connection.cancel(id) }
        calls[index] = nil
        let delivered = content ?? payload
        results[index] = ["extension": .string(target.name), "content": delivered,
                          "modified": .bool(delivered != payload), "timedOut": .bool(timedOut)]
        remaining -= 1
        guard remaining == 0, let respond else { return }
        self.respond = nil
        respond(.success(["delivered": .array(results.compactMap { $0 })]))
    }
}
