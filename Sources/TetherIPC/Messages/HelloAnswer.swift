import TetherJSON
import TetherLoop

/// The host's answer to `extension.hello`.
package struct HelloAnswer: Sendable, Equatable {
    package var hostPID: Int32
    package var group: String
    /// Launched by this host (its link), not started by hand.
    package var managed: Bool
    package var openAccess: Bool
    /// The push budget the host holds it to, when it asked for one.
    package var timeBudgetMilliseconds: UInt64?
    package var protocolVersion: Int
    package var capabilities: [String]
    /// The hello's events the host will send it unasked.
    package var events: [String]

    package init(hostPID: Int32, group: String, managed: Bool, openAccess: Bool, timeBudgetMilliseconds: UInt64?,
                 protocolVersion: Int, capabilities: [String], events: [String]) {
        self.hostPID = hostPID
        self.group = group
        self.managed = managed
        self.openAccess = openAccess
        self.timeBudgetMilliseconds = timeBudgetMilliseconds
        self.protocolVersion = protocolVersion
        self.capabilities = capabilities
        self.events = events
    }

    private enum Field {
        static let hostPID = "hostPid", group = "group", managed = "managed", openAccess = "openAccess"
        static let timeBudgetMilliseconds = "timeBudgetMilliseconds", protocolVersion = "protocol"
        static let capabilities = "capabilities", events = "events", host = "host", pid = "pid", version = "version"
    }

    /// nil when the answer names no host pid: no host answered.
    package init?(json: JSONValue) {
        guard let pid = json[Field.hostPID]?.intValue.flatMap({ Int32(exactly: $0) }) else { return nil }
        func strings(_ field: String) -> [String] { (json[field]?.arrayValue ?? []).compactMap(\.stringValue) }
        self.init(hostPID: pid, group: json[Field.group]?.stringValue ?? "", managed: json[Field.managed]?.boolValue ?? false,
                  openAccess: json[Field.openAccess]?.boolValue ?? false,
                  timeBudgetMilliseconds: json[Field.timeBudgetMilliseconds]?.intValue.flatMap { UInt64(exactly: $0) },
                  protocolVersion: json[Field.protocolVersion]?.intValue ?? 1,
                  capabilities: strings(Field.capabilities), events: strings(Field.events))
    }

    package var json: JSONValue {
        [Field.hostPID: .integer(Int(hostPID)), Field.group: .string(group), Field.managed: .bool(managed),
         Field.openAccess: .bool(openAccess), Field.timeBudgetMilliseconds: timeBudgetMilliseconds.map { .integer($0) } ?? .null,
         Field.protocolVersion: .integer(protocolVersion), Field.capabilities: .array(capabilities.map(JSONValue.string)),
         Field.events: .array(events.map(JSONValue.string)),
         Field.host: [Field.pid: .integer(Int(hostPID)), Field.version: .string(TetherVersion.current)]]
    }
}
