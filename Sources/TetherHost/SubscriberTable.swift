import TetherIPC

/// What a connection may subscribe to.
private let subscribableEvents = Set(HostNotification.subscribable)

/// Who hears each event (`host.subscribe`, a hello's `events`): an event
/// goes to the connections that asked for it, never to all, so a change
/// costs the host one message per subscriber and no extension is woken by
/// another's change. Generic over the connection, so it is tested without
/// a socket. Lives on the host's loop.
struct SubscriberTable<Connection: AnyObject> {
    private var byEvent: [String: [ObjectIdentifier: Connection]] = [:]

    /// `host.subscribe`: every name must be an event the host has (else
    /// refused, with the list, and nothing changes); answers every event
    /// the connection now hears.
    mutating func subscribe(_ connection: Connection, to events: [String]) -> Result<[String], RPCError> {
        if let unknown = events.first(where: { !subscribableEvents.contains($0) }) {
            return .failure(Subscription.unknownEvent(.string(unknown)))
        }
        add(connection, events)
        let key = ObjectIdentifier(connection)
        return .success(subscribableEvents.filter { byEvent[$0]?[key] != nil }.sorted())
    }

    /// A hello's `events`: those the host has, returned (its answer says
    /// them); the others are ignored (an extension made for a newer host
    /// may ask for what this one has not).
    @discardableResult
    mutating func subscribe(_ connection: Connection, hello events: [String]) -> [String] {
        let known = events.filter(subscribableEvents.contains)
        add(connection, known)
        return known
    }

    /// A connection gone: it hears nothing more.
    mutating func remove(_ connection: Connection) {
        let key = ObjectIdentifier(connection)
        for event in subscribableEvents { byEvent[event]?[key] = nil }
    }

    /// Who hears `event`. Of an extension's change (`about` names it),
    /// the user's clients and that extension alone: what becomes of other
    /// extensions is the user's to hear, as their status is.
    /// `extensionName`: the extension a connection is, if it is one.
    func listeners(of event: String, about: String? = nil,
                   extensionName: (ObjectIdentifier) -> String?) -> [Connection] {
        (byEvent[event] ?? [:]).compactMap { key, connection in
            if let about, let listener = extensionName(key), listener != about { return nil }
            return connection
        }
    }

    private mutating func add(_ connection: Connection, _ events: [String]) {
        let key = ObjectIdentifier(connection)
        for event in events { byEvent[event, default: [:]][key] = connection }
    }
}
