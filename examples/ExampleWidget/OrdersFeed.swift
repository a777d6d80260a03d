import TetherExtension

/// The widget's view of the orders API: the latest summary, fetched with a
/// token from the broker (through the host: a widget is host-brokered) when
/// the timeline reloads for a reason that may change it. Lives on the loop.
final class OrdersFeed: @unchecked Sendable {
    /// The defaults key holding the orders URL (`tether defaults set orders.url ...`).
    static let urlKey = "orders.url"
    private(set) var summary: String?
    private var fetching = false

    /// Starts a fetch unless one runs; the widget reloads when it lands.
    func refresh(in context: ExtensionContext) {
        guard !fetching else { return }
        guard let url = (try? context.defaults.value(forKey: Self.urlKey))??.stringValue else {
            summary = nil
            return
        }
        guard context.authState() != .notAuthenticated else {
            summary = "orders: signed out"
            return
        }
        fetching = true
        context.fetchJSON(url) { [self] result in
            fetching = false
            switch result {
            case .success(let answer):
                let orders = answer["orders"]?.arrayValue ?? []
                summary = "orders: " + orders.compactMap { order in
                    guard let id = order["id"]?.stringValue, let status = order["status"]?.stringValue else { return nil }
                    return "\(id) \(status)"
                }.joined(separator: ", ")
            case .failure(let error):
                summary = context.authState() == .userAuthenticated ? "orders: unavailable (\(error))" : "orders: signed out"
            }
            context.reloadTimeline()
        }
    }
}
