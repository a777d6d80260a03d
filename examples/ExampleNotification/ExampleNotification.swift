import TetherExtension

/// A notification service that rewrites each push: it marks the title and
/// notes who rewrote it. A payload with "orderId" has the order fetched
/// (from `orders.url` in the defaults, with a token from the broker) and
/// put into the body. A payload with "delayMs" makes it take that long, to
/// show what happens when the time budget runs out (the original is
/// delivered instead).
@main
struct ExampleNotification: NotificationService {
    func didReceive(_ request: NotificationRequest, in context: ExtensionContext,
                    contentHandler: @escaping @Sendable (NotificationContent) -> Void) {
        var content = request.content
        content.title = "[\(context.name)] " + (content.title ?? "Notification")
        content["rewrittenBy"] = .string(context.name)
        let delay = content["delayMs"]?.intValue ?? 0
        context.log("rewriting \"\(request.content.title ?? "")\" (budget \(request.budget))")
        if let orderID = content["orderId"]?.stringValue,
           let base = (try? context.defaults.value(forKey: "orders.url"))??.stringValue {
            let original = content
            return context.fetchJSON("\(base)/\(orderID)") { result in
                var content = original
                switch result {
                case .success(let order):
                    content.body = "Order \(orderID): \(order["item"]?.stringValue ?? "?") is \(order["status"]?.stringValue ?? "?")"
                case .failure(let error):
                    context.log("cannot fetch order \(orderID): \(error)")
                }
                contentHandler(content)
            }
        }
        guard delay > 0 else { return contentHandler(content) }
        Task {
            // Stands in for slow work (a fetch); it synchronizes nothing.
            try? await Task.sleep(for: .milliseconds(delay))
            contentHandler(content)
        }
    }
}
