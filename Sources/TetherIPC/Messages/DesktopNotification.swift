import TetherJSON

/// What a push payload asks the desktop to show, read from its display
/// fields (org.freedesktop.Notifications' `Notify`): `title` (the
/// summary), `body`, `id` (a later push with the same id replaces the
/// notification), `urgency`, `expiryMilliseconds`, `actions`, `category`,
/// and `showOnDesktop` (false: not shown). Every other field travels on
/// untouched. A malformed display field refuses the push up front, with
/// the field and its limit named: nothing huge or binary reaches the bus.
package struct DesktopNotification: Sendable, Equatable {
    package enum Urgency: String, Sendable, CaseIterable {
        case low, normal, critical
        /// The spec's byte.
        package var level: Int32 { self == .low ? 0 : self == .normal ? 1 : 2 }
    }

    package struct Action: Sendable, Equatable {
        package var key: String
        package var label: String
        package init(key: String, label: String) {
            self.key = key
            self.label = label
        }
    }

    package var id: String?
    package var title: String
    package var body: String
    package var urgency: Urgency?
    /// nil: the server's default; 0: until closed.
    package var expiryMilliseconds: Int32?
    package var actions: [Action]
    package var category: String?
    package var showOnDesktop: Bool

    /// The ceilings, in UTF-8 bytes: more than a notification can show.
    package enum Limit {
        package static let title = 512, body = 4_096, id = 256, category = 64
        package static let actions = 8, actionKey = 64, actionLabel = 64
        /// A day.
        package static let expiryMilliseconds = 86_400_000
    }

    package enum Field {
        package static let id = "id", title = "title", body = "body", urgency = "urgency"
        package static let expiryMilliseconds = "expiryMilliseconds", actions = "actions", category = "category"
        package static let showOnDesktop = "showOnDesktop"
    }

    package init(id: String? = nil, title: String, body: String = "", urgency: Urgency? = nil,
                 expiryMilliseconds: Int32? = nil, actions: [Action] = [], category: String? = nil, showOnDesktop: Bool = true) {
        self.id = id
        self.title = title
        self.body = body
        self.urgency = urgency
        self.expiryMilliseconds = expiryMilliseconds
        self.actions = actions
        self.category = category
        self.showOnDesktop = showOnDesktop
    }

    /// The display fields of `payload`, checked; absent ones are empty.
    package init(payload: [String: JSONValue]) throws(RPCError) {
        func text(_ field: String, limit: Int, in object: [String: JSONValue] = payload,
                  named name: String? = nil) throws(RPCError) -> String? {
            guard let value = object[field], value != .null else { return nil }
            let name = name ?? field
            guard let string = value.stringValue else { throw .invalidParams("\"\(name)\" must be a string") }
            try Self.check(string, name: name, limit: limit)
            return string
        }
        id = try text(Field.id, limit: Limit.id)
        title = try text(Field.title, limit: Limit.title) ?? ""
        body = try text(Field.body, limit: Limit.body) ?? ""
        category = try text(Field.category, limit: Limit.category)
        if let value = payload[Field.urgency], value != .null {
            guard let chosen = value.stringValue.flatMap(Urgency.init(rawValue:)) else {
                throw .invalidParams("\"\(Field.urgency)\" must be low, normal or critical")
            }
            urgency = chosen
        }
        if let value = payload[Field.expiryMilliseconds], value != .null {
            guard let milliseconds = value.intValue, (0...Limit.expiryMilliseconds).contains(milliseconds) else {
                throw .invalidParams("\"\(Field.expiryMilliseconds)\" must be an integer from 0 (until closed) "
                                     + "to \(Limit.expiryMilliseconds) (a day)")
            }
            expiryMilliseconds = Int32(milliseconds)
        }
        actions = []
        if let value = payload[Field.actions], value != .null {
            guard let list = value.arrayValue else {
                throw .invalidParams("\"\(Field.actions)\" must be an array of {\"key\", \"label\"}")
            }
            guard list.count <= Limit.actions else {
                throw .invalidParams("\"\(Field.actions)\" has \(list.count) actions; at most \(Limit.actions)")
            }
            for (index, item) in list.enumerated() {
                guard case .object(let object) = item,
                      let key = try text("key", limit: Limit.actionKey, in: object, named: "actions[\(index)].key"),
                      !key.isEmpty,
                      let label = try text("label", limit: Limit.actionLabel, in: object, named: "actions[\(index)].label")
                else {
                    throw .invalidParams("\"\(Field.actions)[\(index)]\" must be {\"key\": non-empty string, \"label\": string}")
                }
                actions.append(Action(key: key, label: label))
            }
        }
        showOnDesktop = true
        if let value = payload[Field.showOnDesktop], value != .null {
            guard let flag = value.boolValue else { throw .invalidParams("\"\(Field.showOnDesktop)\" must be true or false") }
            showOnDesktop = flag
        }
    }

    /// A display text: within `limit` bytes of UTF-8, and no control
    /// characters but newline and tab (NUL included: C would cut there).
    static func check(_ text: String, name: String, limit: Int) throws(RPCError) {
        let bytes = text.utf8.count
        guard bytes <= limit else {
            throw .invalidParams("\"\(name)\" is \(bytes) bytes; at most \(limit) are shown on the desktop")
        }
        if let bad = text.unicodeScalars.first(where: { ($0.value < 0x20 && $0 != "\n" && $0 != "\t")
                                                        || (0x7F...0x9F).contains($0.value) }) {
            throw .invalidParams("\"\(name)\" holds the control character U+\(String(bad.value, radix: 16, uppercase: true)); "
                                 + "only newline and tab are allowed")
        }
    }
}
