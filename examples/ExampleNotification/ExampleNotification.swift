import TetherExtension

/// A notification service that rewrites each push: it marks the title and
/// notes who rewrote it. A payload with "orderId" has the order fetched
/// (from `orders.url` in the defaults, with a token from the broker) and
/// put into the body. A payload with "delayMs" makes it take that long, to
/// show what happens when the time budget runs out (the rewrite is
/// cancelled and the original delivered).
@main
struct ExampleNotification: NotificationService {
    func didReceive(_ request: NotificationRequest, in context: ExtensionContext) async throws -> NotificationContent {
        var content = request.content
        content.title = "[\(context.name)] " + (content.title ?? "Notification")
        content["rewrittenBy"] = .string(context.name)
        context.log("rewriting \"\(request.content.title ?? "")\" (budget \(request.budget))")
        if let orderID = content["orderId"]?.stringValue,
           let base = (try? context.defaults["orders.url"])?.stringValue {
            do {
                let order = try await context.fetchJSON("\(base)/\(orderID)")
                content.body = "Order \(orderID): \(order["item"]?.stringValue ?? "?") is \(order["status"]?.stringValue ?? "?")"
            } catch {
                context.log("cannot fetch order \(orderID): \(error)")
            }
        }
        if let delay = content["delayMs"]?.intValue, delay > 0 {
            // Stands in for slow work (not synchronization); cancelled when
            // the budget runs out.
            try await Task.sleep(for: .milliseconds(delay))
        }
        return content
    }

    /// What became of it on the desktop (when the host shows pushes there).
    func didReceiveResponse(_ response: NotificationResponse, in context: ExtensionContext) {
        context.log("notification \(response.id ?? "-"): " + (response.action.map { "action \($0)" } ?? "closed (\(response.closeReason ?? 4))"))
    }
}
