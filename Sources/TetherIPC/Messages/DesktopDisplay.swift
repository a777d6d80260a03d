import TetherJSON

/// How a push went on the desktop: `push.send`'s answer carries it as
/// `desktop` — shown (with the server's id, which the events name), or
/// not, with why.
package struct DesktopDisplay: Sendable, Equatable {
    /// The server's id for the notification; nil when not shown.
    package var notification: UInt32?
    /// Why it was not shown.
    package var reason: String?

    package init(notification: UInt32? = nil, reason: String? = nil) {
        self.notification = notification
        self.reason = reason
    }

    package static let field = "desktop"
    private enum Field { static let shown = "shown", notification = "notification", reason = "reason" }

    /// The display in `push.send`'s answer; nil from a host that does not show pushes.
    package init?(answer: JSONValue) {
        guard let value = answer[Self.field] else { return nil }
        self.init(notification: value[Field.notification]?.intValue.flatMap(UInt32.init(exactly:)),
                  reason: value[Field.reason]?.stringValue)
    }

    package var json: JSONValue {
        var object: [String: JSONValue] = [Field.shown: .bool(notification != nil)]
        if let notification { object[Field.notification] = .integer(Int(notification)) }
        if let reason { object[Field.reason] = .string(reason) }
        return .object(object)
    }

    /// `push`'s line for a person.
    package var text: String {
        if let notification { return "shown on the desktop as notification \(notification)" }
        return "not shown on the desktop: \(reason ?? "no reason given")"
    }
}
