import TetherJSON

/// Whether the host's keyboard extensions are input methods (IBus engines)
/// now, as `host.status` carries it (`inputMethod`) and `tether status`
/// and `tether doctor` say it.
package struct InputMethodStatus: Sendable, Equatable {
    package enum State: String, Sendable {
        /// Registered with ibus-daemon: each keyboard is an engine to select.
        case registered
        /// The host has no keyboard extensions.
        case noKeyboards
        /// No ibus-daemon answers (none runs, or it went away).
        case noDaemon
        /// Connecting to ibus-daemon, or registering with it.
        case connecting
    }

    package var state: State
    /// The engines' names (`tether:NAME`), when registered.
    package var engines: [String]
    /// Why not registered, when not.
    package var reason: String?

    package init(state: State, engines: [String] = [], reason: String? = nil) {
        self.state = state
        self.engines = engines
        self.reason = reason
    }

    private enum Field { static let state = "state", engines = "engines", reason = "reason" }

    /// Read leniently: a host of an older release says nothing, read as no keyboards.
    package init(json: JSONValue?) {
        self.init(state: json?[Field.state]?.stringValue.flatMap(State.init(rawValue:)) ?? .noKeyboards,
                  engines: json?[Field.engines]?.arrayValue?.compactMap(\.stringValue) ?? [],
                  reason: json?[Field.reason]?.stringValue)
    }

    package var json: JSONValue {
        var object: [String: JSONValue] = [Field.state: .string(state.rawValue)]
        if !engines.isEmpty { object[Field.engines] = .array(engines.map { .string($0) }) }
        if let reason { object[Field.reason] = .string(reason) }
        return .object(object)
    }

    /// `tether status`'s line.
    package var text: String {
        let detail = reason.map { " (\($0))" } ?? ""
        switch state {
        case .registered: return "input method: IBus engines \(engines.joined(separator: ", ")) (select one: ibus engine NAME)"
        case .noKeyboards: return "input method: no keyboard extensions"
        case .noDaemon: return "input method: not reachable: no ibus-daemon answers\(detail)"
        case .connecting: return "input method: connecting to ibus-daemon\(detail)"
        }
    }
}
