import TetherIPC
import TetherLoop

/// Answers the host's push requests through a `NotificationService`: each
/// push runs `didReceive` in a task of its own, raced against its budget.
/// About 1 s before the end (at the end, for budgets under 2 s)
/// `timeWillExpire` may give a best-effort content; at the end the task is
/// cancelled and the original delivered.
@ExtensionActor
final class NotificationDriver<S: NotificationService>: RoleDriver {
    private let service: S
    private let context: ExtensionContext
    private let budgetMilliseconds: UInt64
    /// How long before the end `timeWillExpire` is asked, for budgets of at
    /// least twice this.
    static var warningMilliseconds: UInt64 { 1_000 }

    init(service: S, context: ExtensionContext, budget: Duration) {
        self.service = service
        self.context = context
        let (seconds, attoseconds) = budget.components
        budgetMilliseconds = UInt64(max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000))  // 10^15 as per ms
    }

    /// Its budget, and the desktop's closes and actions (`didReceiveResponse`).
    func describe(_ hello: inout ExtensionHello) {
        hello.timeBudgetMilliseconds = budgetMilliseconds
        hello.events = [HostNotification.notificationClosed, HostNotification.notificationAction]
    }

    func begin() {}

    func hostEvent(_ event: HostLink.Event) {
        guard case .message(let method, let params, let respond) = event else { return }
        if let response = DesktopNotificationEvent(event: method, params: params) {
            return service.didReceiveResponse(NotificationResponse(response), in: context)
        }
        guard method == ExtensionMethod.receivePush else { return respond(.failure(.methodNotFound(method))) }
        let push: PushReceive
        do throws(RPCError) { push = try PushReceive(receivedParams: params) } catch { return respond(.failure(error)) }
        let budget = push.budgetMilliseconds ?? budgetMilliseconds
        receive(NotificationRequest(content: NotificationContent(push.payload), budget: .milliseconds(budget)),
                budgetMilliseconds: budget, respond: respond)
    }

    private func receive(_ request: NotificationRequest, budgetMilliseconds budget: UInt64,
                         respond: @escaping RPCConnection.Respond) {
        let original = request.content
        let push = PendingPush(respond: respond, original: original, loop: context.loop)
        push.task = ExtensionActor.task { [self] in
            do {
                let content = try await service.didReceive(request, in: context)
                push.settle(content, timedOut: false)
            } catch {
                guard !push.isSettled else { return }  // cancelled at the budget: already answered
                context.log("didReceive failed: \(error); delivering the original")
                push.settle(original, timedOut: false)
            }
        }
        let warning = budget >= 2 * Self.warningMilliseconds ? budget - Self.warningMilliseconds : budget
        push.warningTimer.start(afterMilliseconds: warning) { [unowned self] in
            guard !push.isSettled else { return }
            if let content = service.timeWillExpire(request, in: context) {
                context.log("time budget of \(budget) ms nearly ran out; delivering what timeWillExpire gave")
                return push.settle(content, timedOut: true)
            }
            if warning == budget { expire() }
        }
        if warning < budget {
            push.budgetTimer.start(afterMilliseconds: budget) { expire() }
        }
        func expire() {
            guard !push.isSettled else { return }
            context.log("time budget of \(budget) ms ran out; delivering the original")
            push.settle(original, timedOut: true)
        }
    }
}

/// One push awaiting its answer: whichever of the service, `timeWillExpire`
/// and the budget comes first settles it; the others find it settled.
@ExtensionActor
private final class PendingPush {
    let respond: RPCConnection.Respond
    let original: NotificationContent
    let warningTimer: LoopTimer
    let budgetTimer: LoopTimer
    var task: Task<Void, Never>?
    private(set) var isSettled = false

    init(respond: @escaping RPCConnection.Respond, original: NotificationContent, loop: EventLoop) {
        self.respond = respond
        self.original = original
        warningTimer = LoopTimer(loop: loop)
        budgetTimer = LoopTimer(loop: loop)
    }

    func settle(_ content: NotificationContent, timedOut: Bool) {
        guard !isSettled else { return }
        isSettled = true
        warningTimer.close()
        budgetTimer.close()
        task?.cancel()
        respond(.success(DeliveredPush(content: content.fields, modified: content != original, timedOut: timedOut).json))
    }
}
