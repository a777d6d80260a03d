import TetherIPC
import TetherLoop

/// Answers the host's push requests through a `NotificationService`, racing
/// each against its time budget.
final class NotificationDriver<S: NotificationService>: RoleDriver {
    private let service: S
    private let context: ExtensionContext
    private let budgetMilliseconds: UInt64

    init(service: S, context: ExtensionContext, budget: Duration) {
        self.service = service
        self.context = context
        let (seconds, attoseconds) = budget.components
        budgetMilliseconds = UInt64(max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000))  // 10^15 as per ms
    }

    var helloFields: [String: JSONValue] { ["timeBudgetMilliseconds": .integer(budgetMilliseconds)] }

    func begin() {}

    func hostEvent(_ event: HostLink.Event) {
        guard case .message(let method, let params, let respond) = event else { return }
        guard method == ExtensionMethod.receivePush else {
            if method != HostNotification.stopping { respond(.failure(.methodNotFound(method))) }
            return
        }
        guard case .object(let payload) = params?["payload"] ?? .null else {
            return respond(.failure(.invalidParams("\"payload\" must be a JSON object")))
        }
        let budget = params?["budgetMilliseconds"]?.intValue.flatMap { $0 > 0 ? UInt64($0) : nil } ?? budgetMilliseconds
        let original = NotificationContent(payload)
        let pending = PendingPush(respond: respond, timer: LoopTimer(loop: context.loop))
        pending.timer.start(afterMilliseconds: budget) { [context] in
            guard pending.settle() else { return }
            context.log("time budget of \(budget) ms ran out; delivering the original")
            respond(.success(["content": .object(original.fields), "modified": false, "timedOut": true]))
        }
        let loop = context.loop
        service.didReceive(NotificationRequest(content: original, budget: .milliseconds(budget)), in: context) { content in
            loop.execute {
                guard pending.settle() else { return }
                pending.respond(.success(["content": .object(content.fields),
                                          "modified": .bool(content != original), "timedOut": false]))
            }
        }
    }
}

/// One push awaiting its answer: whichever of the service and the budget
/// comes first settles it. Touched on the loop only.
private final class PendingPush: @unchecked Sendable {
    let respond: RPCConnection.Respond
    let timer: LoopTimer
    private var settled = false

    init(respond: @escaping RPCConnection.Respond, timer: LoopTimer) {
        self.respond = respond
        self.timer = timer
    }

    /// True the first time only.
    func settle() -> Bool {
        guard !settled else { return false }
        settled = true
        timer.close()
        return true
    }
}
