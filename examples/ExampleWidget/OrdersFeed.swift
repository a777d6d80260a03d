import TetherExtension

/// The widget's view of the orders API: once `orders.url` is in the defaults
/// and someone is signed in, the latest orders, fetched with a token from
/// the broker (through the host: a widget is host-brokered).
@ExtensionActor
enum OrdersFeed {
    /// The defaults key holding the orders URL (`tether defaults set orders.url ...`).
    static let urlKey = "orders.url"

    /// "orders: 1041 delivered, ...", or nil when there is no orders URL.
    static func summary(in context: ExtensionContext) async -> String? {
        guard let url = (try? context.defaults[urlKey])?.stringValue else { return nil }
        guard context.authState() != .notAuthenticated else { return "orders: signed out" }
        do {
            let orders = try await context.fetchJSON(url)["orders"]?.arrayValue ?? []
            return "orders: " + orders.compactMap { order in
                guard let id = order["id"]?.stringValue, let status = order["status"]?.stringValue else { return nil }
                return "\(id) \(status)"
            }.joined(separator: ", ")
        } catch {
            return context.authState() == .userAuthenticated ? "orders: unavailable (\(error))" : "orders: signed out"
        }
    }
}
