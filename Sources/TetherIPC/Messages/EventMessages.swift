import TetherJSON

/// `host.subscribe`'s params and answer, and a hello's `events`: the
/// events a connection hears.
package struct Subscription: Sendable, Equatable {
    package var events: [String]

    package init(events: [String]) {
        self.events = events
    }

    private enum Field { static let events = "events" }

    /// Read from a request's params; the host checks each name.
    package init(params: JSONValue?) throws(RPCError) {
        guard let asked = params?[Field.events]?.arrayValue else {
            throw .invalidParams("\"\(Field.events)\" must be an array of event names")
        }
        var names: [String] = []
        for value in asked {
            guard let name = value.stringValue else { throw Self.unknownEvent(value) }
            names.append(name)
        }
        self.init(events: names)
    }

    package var json: JSONValue { [Field.events: .array(events.map(JSONValue.string))] }

    /// An event no host sends on subscription.
    package static func unknownEvent(_ value: JSONValue) -> RPCError {
        .invalidParams("unknown event \(value); events are " + HostNotification.subscribable.joined(separator: ", "))
    }
}

/// `store.changed`: a store of the group was replaced.
package enum StoreChange: String, Sendable {
    case defaults
    case credentials

    private enum Field { static let store = "store" }

    package init?(params: JSONValue?) {
        guard let value = params?[Field.store]?.stringValue.flatMap(StoreChange.init(rawValue:)) else { return nil }
        self = value
    }

    package var json: JSONValue { [Field.store: .string(rawValue)] }
}

/// `defaults.changed`: keys an extension announced, relayed to the others.
package struct DefaultsChange: Sendable, Equatable {
    package var keys: [String]

    package init(keys: [String]) {
        self.keys = keys
    }

    private enum Field { static let keys = "keys" }

    /// As the host relays it: whatever it holds, lax (the host checked it).
    package init(params: JSONValue?) {
        self.init(keys: (params?[Field.keys]?.arrayValue ?? []).compactMap(\.stringValue))
    }

    /// As a client sends it: `keys`, if there, a list of strings.
    package init(request params: JSONValue?) throws(RPCError) {
        self.init(keys: try params.optionalStrings(Field.keys) ?? [])
    }

    package var json: JSONValue { [Field.keys: .array(keys.map(JSONValue.string))] }
}

/// `defaults.changed`'s answer: how many attached extensions heard it, and
/// the idle on-demand widgets launched to show it.
package struct DefaultsRelayed: WireMessage, Equatable {
    package var notified: Int
    package var launched: [String]

    package init(notified: Int, launched: [String]) {
        self.notified = notified
        self.launched = launched
    }

    private enum Field { static let notified = "notified", launched = "launched" }

    package init(wire: JSONValue?) throws(RPCError) {
        self.init(notified: wire?[Field.notified]?.intValue ?? 0,
                  launched: (wire?[Field.launched]?.arrayValue ?? []).compactMap(\.stringValue))
    }

    package var wire: JSONValue { [Field.notified: .integer(notified), Field.launched: .array(launched.map(JSONValue.string))] }
}
