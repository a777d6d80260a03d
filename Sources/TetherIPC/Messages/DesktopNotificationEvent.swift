import TetherJSON

/// `notification.closed` and `notification.action`: what became of a
/// notification the host showed on the desktop, to subscribers (`tether
/// watch notifications`, `push --wait`, an extension that asked). Only the
/// host's own notifications are told.
package struct DesktopNotificationEvent: Sendable, Equatable {
    /// `NotificationClosed`'s reasons, as the spec numbers them.
    package enum Reason: UInt32, Sendable {
        case expired = 1, dismissed = 2, closed = 3, undefined = 4

        package var name: String {
            switch self {
            case .expired: "expired"
            case .dismissed: "dismissed by the user"
            case .closed: "closed by a CloseNotification call"
            case .undefined: "undefined"
            }
        }
    }

    /// The server's id for it (`Notify`'s answer; `push`'s `desktop.notification`).
    package var notification: UInt32
    /// The payload's `id`, if it had one.
    package var id: String?
    /// Set for `notification.action`: the action's key.
    package var action: String?
    /// Set for `notification.closed`: the spec's number (1 to 4; others are
    /// passed on as the server sent them).
    package var reason: UInt32?

    package init(notification: UInt32, id: String?, action: String? = nil, reason: UInt32? = nil) {
        self.notification = notification
        self.id = id
        self.action = action
        self.reason = reason
    }

    private enum Field { static let notification = "notification", id = "id", action = "action", reason = "reason" }

    /// Its event's name.
    package var event: String { action != nil ? HostNotification.notificationAction : HostNotification.notificationClosed }

    /// Read from an event's params; nil when it is neither.
    package init?(event: String, params: JSONValue?) {
        guard event == HostNotification.notificationClosed || event == HostNotification.notificationAction,
              let number = params?[Field.notification]?.intValue, let notification = UInt32(exactly: number) else { return nil }
        let action = event == HostNotification.notificationAction ? params?[Field.action]?.stringValue ?? "" : nil
        let reason = event == HostNotification.notificationClosed
            ? UInt32(exactly: params?[Field.reason]?.intValue ?? 4) ?? 4 : nil
        self.init(notification: notification, id: params?[Field.id]?.stringValue, action: action, reason: reason)
    }

    package var json: JSONValue {
        var object: [String: JSONValue] = [Field.notification: .integer(Int(notification))]
        if let id { object[Field.id] = .string(id) }
        if let action { object[Field.action] = .string(action) }
        if let reason { object[Field.reason] = .integer(Int(reason)) }
        return .object(object)
    }

    /// One line for a person: "closed: expired (1)", "action: open".
    package var text: String {
        let subject = id.map { "notification \(notification) (id \($0))" } ?? "notification \(notification)"
        if let action { return "\(subject): action \(action)" }
        let number = reason ?? 4
        return "\(subject): closed, \(Reason(rawValue: number)?.name ?? "reason") (\(number))"
    }
}
