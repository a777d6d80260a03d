import TetherIPC
import TetherLoop

/// One push on its way through the notification extensions. Each gets the
/// payload and a time budget; whatever has not answered by the budget (plus
/// a second of slack for the extension's own timer) delivers the original
/// content, as iOS does. An on-demand extension is launched for the push,
/// and its launch counts against the budget. Lives on the host's loop.
final class PushDelivery {
    static let defaultBudgetMilliseconds: UInt64 = 30_000
    static let slackMilliseconds: UInt64 = 1_000
    /// Pushes an extension may leave unanswered: past them it is skipped (the
    /// original content at once), so no push waits behind a pile of
    /// unanswered ones, and no extension makes the host hold more.
    static let maximumUnansweredPerExtension = 8

    /// How a push went for one extension: it answered, its budget ran out,
    /// or it could not take the push (gone, or its call failed). The
    /// original content is delivered in the last two.
    enum Outcome: String {
        case answered, timedOut, failed
        /// Skipped: it had `maximumUnansweredPerExtension` pushes unanswered.
        case busy
    }

    /// Told once per extension when its part is settled: how, how long it
    /// took (from the push's arrival), and whether the content changed.
    typealias Report = (_ name: String, _ outcome: Outcome, _ milliseconds: UInt64, _ modified: Bool) -> Void
    /// The push's answer, or why it ended.
    typealias Respond = (Result<PushAnswer, RPCError>) -> Void

    /// One extension the push goes through.
    struct Route {
        let name: String
        /// Hands over the attached extension once it can take the push: at
        /// once when attached, after its hello when launching, nil if it
        /// cannot. Returns a cancel for a hand-over that has not happened.
        let ready: (@escaping (AttachedExtension?) -> Void) -> (() -> Void)
        /// The push is settled for it (answered, timed out or failed).
        let settled: () -> Void
    }

    private let loop: EventLoop
    private let payload: [String: JSONValue]
    private let budget: UInt64?
    private let startedAt: UInt64
    private var results: [DeliveredPush?]
    private var remaining: Int
    private var timers: [LoopTimer] = []
    /// The call to each extension, cancelled when its budget runs out: an
    /// extension that never answers leaves nothing (payload included) behind.
    private var calls: [(connection: RPCConnection, id: JSONValue)?] = []
    private var cancels: [(() -> Void)?] = []
    private var respond: Respond?
    private let routes: [Route]
    private let report: Report

    private init(loop: EventLoop, payload: [String: JSONValue], budget: UInt64?, routes: [Route], report: @escaping Report,
                 respond: @escaping Respond) {
        self.report = report
        self.loop = loop
        self.payload = payload
        self.budget = budget
        self.routes = routes
        startedAt = loop.now
        results = Array(repeating: nil, count: routes.count)
        calls = Array(repeating: nil, count: routes.count)
        cancels = Array(repeating: nil, count: routes.count)
        remaining = routes.count
        self.respond = respond
    }

    /// Delivers `payload` through `routes` and answers `respond` with what
    /// each delivered. The
    /// delivery, while it has routes to wait for (`end` ends it early).
    @discardableResult
    static func start(loop: EventLoop, payload: [String: JSONValue], budgetMilliseconds: UInt64?,
                      routes: [Route], report: @escaping Report,
                      respond: @escaping Respond) -> PushDelivery? {
        guard !routes.isEmpty else {
            // No service extension: the original is what gets delivered.
            respond(.success(PushAnswer(delivered: [DeliveredPush(content: payload, modified: false, timedOut: false)])))
            return nil
        }
        let delivery = PushDelivery(loop: loop, payload: payload, budget: budgetMilliseconds,
                                    routes: routes, report: report, respond: respond)
        for (index, route) in routes.enumerated() {
            let timer = LoopTimer(loop: loop)
            delivery.timers.append(timer)
            // Until the extension says its own budget, the push's or the default.
            delivery.arm(index, budget: budgetMilliseconds ?? defaultBudgetMilliseconds)
            // The delivery lives as long as one of its timers or calls does.
            let cancel = route.ready { target in delivery.send(index, to: target) }
            if delivery.results[index] == nil { delivery.cancels[index] = cancel }
        }
        return delivery.respond == nil ? nil : delivery
    }

    /// Ends the push now, answered with `error`: nothing of it (payload,
    /// calls, timers) is kept. No-op once answered.
    func end(_ error: RPCError) {
        guard let respond else { return }
        self.respond = nil
        for index in routes.indices where results[index] == nil {
            finish(index, content: nil, timedOut: false, outcome: .failed)
        }
        respond(.failure(error))
    }

    /// The budget runs from the push's arrival, launch time included.
    private func arm(_ index: Int, budget: UInt64) {
        let elapsed = loop.now - startedAt
        let left = budget + Self.slackMilliseconds > elapsed ? budget + Self.slackMilliseconds - elapsed : 0
        timers[index].start(afterMilliseconds: left) { [self] in
            self.finish(index, content: nil, timedOut: true, outcome: .timedOut)
        }
    }

    private func send(_ index: Int, to target: AttachedExtension?) {
        cancels[index] = nil
        guard results[index] == nil else { return }
        guard let target else { return finish(index, content: nil, timedOut: false, outcome: .failed) }
        guard target.connection.pendingCalls < Self.maximumUnansweredPerExtension else {
            return finish(index, content: nil, timedOut: false, outcome: .busy)
        }
        let budget = budget ?? target.timeBudgetMilliseconds ?? Self.defaultBudgetMilliseconds
        if self.budget == nil { arm(index, budget: budget) }
        let elapsed = loop.now - startedAt
        let left = max(1, budget > elapsed ? budget - elapsed : 1)
        let id = target.connection.call(ExtensionMethod.receivePush,
                                        PushReceive(payload: payload, budgetMilliseconds: left).json) { [self] result in
            switch result {
            case .success(let answer):
                let answer = DeliveredPush(json: answer)
                // Its own timer may have run out first: that is a timeout too.
                self.finish(index, content: answer.content, timedOut: answer.timedOut,
                            outcome: answer.timedOut ? .timedOut : .answered)
            case .failure:
                self.finish(index, content: nil, timedOut: false, outcome: .failed)
            }
        }
        if results[index] == nil { calls[index] = (target.connection, id) }
    }

    private func finish(_ index: Int, content: [String: JSONValue]?, timedOut: Bool, outcome: Outcome) {
        guard results[index] == nil else { return }
        timers[index].close()
        if let call = calls[index] { call.connection.cancel(call.id) }
        calls[index] = nil
        cancels[index]?()
        cancels[index] = nil
        let delivered = content ?? payload
        results[index] = DeliveredPush(extensionName: routes[index].name, content: delivered,
                                       modified: delivered != payload, timedOut: timedOut)
        routes[index].settled()
        report(routes[index].name, outcome, loop.now - startedAt, delivered != payload)
        remaining -= 1
        guard remaining == 0, let respond else { return }
        self.respond = nil
        respond(.success(PushAnswer(delivered: results.compactMap { $0 })))
    }
}
