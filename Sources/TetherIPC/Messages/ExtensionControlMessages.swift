import TetherJSON

/// `extension.stop`'s answer: whether it was running (and so was stopped),
/// and its state now.
public struct ExtensionStopped: WireMessage, Equatable {
    public var name: String
    public var stopped: Bool
    public var state: String

    public init(name: String, stopped: Bool, state: String) {
        self.name = name
        self.stopped = stopped
        self.state = state
    }

    private enum Field { static let name = "name", stopped = "stopped", state = "state" }

    public init(wire: JSONValue?) throws(RPCError) {
        guard let name = wire?[Field.name]?.stringValue, let stopped = wire?[Field.stopped]?.boolValue else {
            throw .invalidParams("not a stopped extension")
        }
        self.init(name: name, stopped: stopped, state: wire?[Field.state]?.stringValue ?? "")
    }

    public var wire: JSONValue { [Field.name: .string(name), Field.stopped: .bool(stopped), Field.state: .string(state)] }
}

/// `extension.list`'s answer: each extension as `host.status` lists it.
public struct ExtensionListing: WireMessage, Equatable {
    public var extensions: [ExtensionStatus]

    public init(_ extensions: [ExtensionStatus]) { self.extensions = extensions }

    public init(wire: JSONValue?) throws(RPCError) {
        guard let items = wire?.arrayValue else { throw .invalidParams("not a list of extensions") }
        extensions = items.map(ExtensionStatus.init(json:))
    }

    public var wire: JSONValue { .array(extensions.map(\.json)) }
}
