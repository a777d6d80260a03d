import TetherJSON

/// `extension.stop`'s answer: whether it was running (and so was stopped),
/// and its state now.
package struct ExtensionStopped: WireMessage, Equatable {
    package var name: String
    package var stopped: Bool
    package var state: String

    package init(name: String, stopped: Bool, state: String) {
        self.name = name
        self.stopped = stopped
        self.state = state
    }

    private enum Field { static let name = "name", stopped = "stopped", state = "state" }

    package init(wire: JSONValue?) throws(RPCError) {
        guard let name = wire?[Field.name]?.stringValue, let stopped = wire?[Field.stopped]?.boolValue else {
            throw .invalidParams("not a stopped extension")
        }
        self.init(name: name, stopped: stopped, state: wire?[Field.state]?.stringValue ?? "")
    }

    package var wire: JSONValue { [Field.name: .string(name), Field.stopped: .bool(stopped), Field.state: .string(state)] }
}

/// `extension.list`'s answer: each extension as `host.status` lists it.
package struct ExtensionListing: WireMessage, Equatable {
    package var extensions: [ExtensionStatus]

    package init(_ extensions: [ExtensionStatus]) { self.extensions = extensions }

    package init(wire: JSONValue?) throws(RPCError) {
        guard let items = wire?.arrayValue else { throw .invalidParams("not a list of extensions") }
        extensions = items.map(ExtensionStatus.init(json:))
    }

    package var wire: JSONValue { .array(extensions.map(\.json)) }
}
