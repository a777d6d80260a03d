import TetherJSON

// The protocol's older messages as they cross the wire (`WireMessage`),
// each by the parsing and the JSON it already had.

extension HostStatus: WireMessage {
    package init(wire: JSONValue?) throws(RPCError) { self.init(json: wire ?? .null) }
    package var wire: JSONValue { json }
}

/// `extension.start`'s answer: the extension as `host.status` lists it.
extension ExtensionStatus: WireMessage {
    package init(wire: JSONValue?) throws(RPCError) { self.init(json: wire ?? .null) }
    package var wire: JSONValue { json }
}

extension WidgetUpdate: WireMessage {
    package init(wire: JSONValue?) throws(RPCError) {
        guard let update = WidgetUpdate(json: wire) else { throw .invalidParams("not a widget's update") }
        self = update
    }
    package var wire: JSONValue { json }
}

extension ExtensionHello: WireMessage {
    /// Any name: the host checks its own rule (`HostRoute`'s decoder).
    package init(wire: JSONValue?) throws(RPCError) { try self.init(params: wire) }
    package var wire: JSONValue { json }
}

extension HelloAnswer: WireMessage {
    package init(wire: JSONValue?) throws(RPCError) {
        guard let wire, let answer = HelloAnswer(json: wire) else { throw .invalidParams("not a hello's answer") }
        self = answer
    }
    package var wire: JSONValue { json }
}

extension PushRequest: WireMessage {
    package init(wire: JSONValue?) throws(RPCError) { try self.init(params: wire) }
    package var wire: JSONValue { json }
}

extension TokenRequest: WireMessage {
    package init(wire: JSONValue?) throws(RPCError) { self.init(params: wire) }
    package var wire: JSONValue { json ?? .object([:]) }
}

extension TokenGrant: WireMessage {
    package init(wire: JSONValue?) throws(RPCError) {
        guard let wire, let grant = TokenGrant(json: wire) else { throw .invalidParams("not a token grant") }
        self = grant
    }
    package var wire: JSONValue { json }
}

extension Subscription: WireMessage {
    package init(wire: JSONValue?) throws(RPCError) { try self.init(params: wire) }
    package var wire: JSONValue { json }
}

extension DefaultsChange: WireMessage {
    package init(wire: JSONValue?) throws(RPCError) { try self.init(request: wire) }
    package var wire: JSONValue { json }
}

extension WidgetEntry: WireMessage {
    package init(wire: JSONValue?) throws(RPCError) { try self.init(params: wire) }
    package var wire: JSONValue { json }
}
