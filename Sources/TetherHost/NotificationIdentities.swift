/// Which notifications on the desktop are the host's: the server's id for
/// each payload `id` (a push with the same id replaces it), and the
/// payload id of each server id (what the events name). Both bounded: past
/// `maximum` the oldest are forgotten (a later push with a forgotten id
/// shows a new notification; a forgotten one's events are not told).
struct NotificationIdentities {
    static let maximum = 1_024

    private(set) var serverIDs: [String: UInt32] = [:]
    private(set) var payloadIDs: [UInt32: String?] = [:]
    /// Server ids, oldest first (`start` onwards are live).
    private var order: [UInt32] = []
    private var start = 0

    /// Entries kept in `order` (live or not yet dropped).
    var orderCount: Int { order.count - start }

    /// The server's id for a payload's `id`, if it is still shown.
    func serverID(for id: String?) -> UInt32 {
        id.flatMap { serverIDs[$0] } ?? 0
    }

    /// The host's notification `server` (for payload `id`), shown now.
    mutating func record(_ server: UInt32, id: String?) {
        switch payloadIDs[server] {
        case nil: order.append(server)
        // A server id given again (the server restarted, or answers every
        // call with one id): the payload id it had shows nothing now.
        case .some(.some(let previous)) where previous != id && serverIDs[previous] == server:
            serverIDs[previous] = nil
        default: break
        }
        payloadIDs[server] = .some(id)
        if let id { serverIDs[id] = server }
        while payloadIDs.count > Self.maximum, start < order.count {
            forget(order[start])
            start += 1
        }
        // Closed ones and the forgotten front are dropped now and then,
        // not on every push: `order` stays under three times the maximum.
        if order.count > 2 * Self.maximum {
            order = order[start...].filter { payloadIDs[$0] != nil }
            start = 0
        }
    }

    /// Whether `server` is the host's; the payload id it had (nil for none).
    func known(_ server: UInt32) -> String?? { payloadIDs[server] }

    /// Closed: its id no longer replaces anything.
    mutating func forget(_ server: UInt32) {
        guard let id = payloadIDs.removeValue(forKey: server) else { return }
        if let id, serverIDs[id] == server { serverIDs[id] = nil }
    }
}
