import TetherJSON

/// One extension as `host.status` and `extension.list` list it, as
/// `extension.start` answers and `extension.changed` tells: what the host
/// supervises (its state, restarts, last exit, confinement) and what is
/// attached (its connection). What does not apply is left out.
package struct ExtensionStatus: Sendable, Equatable {
    package var name: String
    package var role: String
    package var pid: Int32?
    /// idle, starting, running, waiting, external, stopping, stopped,
    /// failed; "attached" for one started by hand.
    package var state: String?
    package var restarts: Int?
    package var droppedLines: Int?
    package var activation: String?
    /// How its process last ended (`reason`, `code` or `signal`, `at`).
    package var lastExit: JSONValue?
    /// What confines it.
    package var sandbox: JSONValue?
    package var attached: Bool?
    package var managed: Bool?
    package var openAccess: Bool?
    package var protocolVersion: Int?
    package var pendingCalls: Int?
    package var waitingForHello: Int?
    /// One the host supervises: its `pid` and `lastExit` are given, null
    /// when it has none.
    package var supervised: Bool

    package init(name: String, role: String, pid: Int32? = nil, supervised: Bool = false) {
        self.name = name
        self.role = role
        self.pid = pid
        self.supervised = supervised
    }

    private enum Field {
        static let name = "name", role = "role", pid = "pid", state = "state", restarts = "restarts"
        static let droppedLines = "droppedLines", activation = "activation", lastExit = "lastExit", sandbox = "sandbox"
        static let attached = "attached", managed = "managed", openAccess = "openAccess", protocolVersion = "protocol"
        static let pendingCalls = "pendingCalls", waitingForHello = "waitingForHello"
    }

    package init(json: JSONValue) {
        self.init(name: json[Field.name]?.stringValue ?? "?", role: json[Field.role]?.stringValue ?? "?",
                  pid: json[Field.pid]?.intValue.map { Int32(clamping: $0) }, supervised: json[Field.activation] != nil)
        state = json[Field.state]?.stringValue
        restarts = json[Field.restarts]?.intValue
        droppedLines = json[Field.droppedLines]?.intValue
        activation = json[Field.activation]?.stringValue
        lastExit = json[Field.lastExit].flatMap { value -> JSONValue? in value == .null ? Optional.none : value }
        sandbox = json[Field.sandbox]
        attached = json[Field.attached]?.boolValue
        managed = json[Field.managed]?.boolValue
        openAccess = json[Field.openAccess]?.boolValue
        protocolVersion = json[Field.protocolVersion]?.intValue
        pendingCalls = json[Field.pendingCalls]?.intValue
        waitingForHello = json[Field.waitingForHello]?.intValue
    }

    package var json: JSONValue {
        var object: [String: JSONValue] = [Field.name: .string(name), Field.role: .string(role)]
        func put(_ field: String, _ value: JSONValue?) { if let value { object[field] = value } }
        // JSONValue takes a nil literal as JSON null: "absent" is spelled out.
        let absent: JSONValue? = supervised ? JSONValue.null : Optional.none
        put(Field.pid, pid.map { .integer(Int($0)) } ?? absent)
        put(Field.lastExit, lastExit ?? absent)
        put(Field.state, state.map(JSONValue.string))
        put(Field.restarts, restarts.map { .integer($0) })
        put(Field.droppedLines, droppedLines.map { .integer($0) })
        put(Field.activation, activation.map(JSONValue.string))
        put(Field.sandbox, sandbox)
        put(Field.attached, attached.map(JSONValue.bool))
        put(Field.managed, managed.map(JSONValue.bool))
        put(Field.openAccess, openAccess.map(JSONValue.bool))
        put(Field.protocolVersion, protocolVersion.map { .integer($0) })
        put(Field.pendingCalls, pendingCalls.map { .integer($0) })
        put(Field.waitingForHello, waitingForHello.map { .integer($0) })
        return .object(object)
    }
}
