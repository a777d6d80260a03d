import TetherJSON

/// Whether the host shows delivered pushes on the desktop, as `host.status`
/// carries it (`desktopNotifications`) and `tether status` says it.
public struct DesktopNotificationsStatus: Sendable, Equatable {
    public enum State: String, Sendable {
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

    public var state: State
    /// The server's name and version (`GetServerInformation`), when shown.
    public var server: String?
    public var version: String?
    /// Why not shown, when not.
    public var reason: String?

    public init(state: State, server: String? = nil, version: String? = nil, reason: String? = nil) {
        self.state = state
        self.server = server
        self.version = version
        self.reason = reason
    }

    private enum Field { static let state = "state", server = "server", version = "version", reason = "reason" }

    /// Read leniently: a host of an older release says nothing, read as off.
    public init(json: JSONValue?) {
        self.init(state: json?[Field.state]?.stringValue.flatMap(State.init(rawValue:)) ?? .off,
                  server: json?[Field.server]?.stringValue, version: json?[Field.version]?.stringValue,
                  reason: json?[Field.reason]?.stringValue)
    }

    public var json: JSONValue {
        var object: [String: JSONValue] = [Field.state: .string(state.rawValue)]
        if let server { object[Field.server] = .string(server) }
        if let version { object[Field.version] = .string(version) }
        if let reason { object[Field.reason] = .string(reason) }
        return .object(object)
    }

    /// `tether status`'s line.
    public var text: String {
        let why = reason.map { " (\($0))" } ?? ""
        switch state {
        case .shown: return "desktop notifications: shown via \(server ?? "the notification server") \(version ?? "")"
            .trimmingSuffixSpaces()
        case .off: return "desktop notifications: off (tether host --no-desktop-notifications)"
        case .noSessionBus: return "desktop notifications: not shown: no session bus\(why)"
        case .noServer: return "desktop notifications: not shown: no notification server on the session bus\(why)"
        case .connecting: return "desktop notifications: connecting to the session bus"
        }
    }
}

extension String {
    fileprivate func trimmingSuffixSpaces() -> String {
        var text = self
        while text.hasSuffix(" ") { text.removeLast() }
        return text
    }
}
