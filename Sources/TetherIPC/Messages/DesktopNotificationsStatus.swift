import TetherJSON

/// Whether the host shows delivered pushes on the desktop, as `host.status`
/// carries it (`desktopNotifications`) and `tether status` says it.
package struct DesktopNotificationsStatus: Sendable, Equatable {
    package enum State: String, Sendable {
        /// A server answers on the session bus: pushes are shown.
        case shown
        /// Turned off (`tether host --no-desktop-notifications`).
        case off
        /// No session bus to reach (no desktop session), or it went away.
        case noSessionBus
        /// The bus answers, but no server owns org.freedesktop.Notifications.
        case noServer
        /// Connecting to the bus, or asking who serves notifications.
        case connecting
    }

    package var state: State
    /// The server's name and version (`GetServerInformation`), when shown.
    package var server: String?
    package var version: String?
    /// Why not shown, when not.
    package var reason: String?

    package init(state: State, server: String? = nil, version: String? = nil, reason: String? = nil) {
        self.state = state
        self.server = server
        self.version = version
        self.reason = reason
    }

    private enum Field { static let state = "state", server = "server", version = "version", reason = "reason" }

    /// Read leniently: a host of an older release says nothing, read as off.
    package init(json: JSONValue?) {
        self.init(state: json?[Field.state]?.stringValue.flatMap(State.init(rawValue:)) ?? .off,
                  server: json?[Field.server]?.stringValue, version: json?[Field.version]?.stringValue,
                  reason: json?[Field.reason]?.stringValue)
    }

    package var json: JSONValue {
        var object: [String: JSONValue] = [Field.state: .string(state.rawValue)]
        if let server { object[Field.server] = .string(server) }
        if let version { object[Field.version] = .string(version) }
        if let reason { object[Field.reason] = .string(reason) }
        return .object(object)
    }

    /// `tether status`'s line.
    package var text: String { "desktop notifications: " + summary }

    /// The state in a few words: "shown via dunst 1.9.0", "not shown: no session bus (…)".
    package var summary: String {
        guard let why = whyNotShown else {
            return "shown via " + [server ?? "the notification server", version ?? ""].filter { !$0.isEmpty }
                .joined(separator: " ")
        }
        return state == .off ? why : "not shown: " + why
    }

    /// Why pushes are not shown; nil when they are.
    package var whyNotShown: String? {
        let detail = reason.map { " (\($0))" } ?? ""
        switch state {
        case .shown: return nil
        case .off: return "off (tether host --no-desktop-notifications)"
        case .noSessionBus: return "no session bus\(detail)"
        case .noServer: return "no notification server on the session bus\(detail)"
        case .connecting: return "still connecting to the session bus"
        }
    }
}
