import TetherJSON
import TetherLoop

/// `extension.hello`: an extension introduces itself on its connection.
/// The SDK sends it, the host reads it; shell and Python extensions write
/// the same object by hand (docs/protocol.md).
package struct ExtensionHello: Sendable, Equatable {
    package var name: String
    /// widget, keyboard or notification; the host checks the word.
    package var role: String
    package var pid: Int32?
    /// Claimed open access; the host's manifest decides where it has one.
    package var openAccess: Bool?
    /// 1 when the hello says none: the protocol before versions.
    package var protocolVersion: Int
    /// The SDK's release, informational.
    package var sdk: String?
    /// A notification extension's own push budget (positive; the host caps it).
    package var timeBudgetMilliseconds: UInt64?
    /// Events it hears from now on without asking again (`host.subscribe`'s).
    package var events: [String]
    /// Its SIGTERM handler ends it (the SDK's does): the host need not
    /// check, at a stop, that SIGTERM reaches it. One that says so and has
    /// none waits out its grace for the SIGKILL.
    package var endsOnSigterm: Bool

    package init(name: String, role: String, pid: Int32? = nil, openAccess: Bool? = nil,
                 protocolVersion: Int = HostProtocol.current, sdk: String? = TetherVersion.current,
                 timeBudgetMilliseconds: UInt64? = nil, events: [String] = [], endsOnSigterm: Bool = false) {
        self.name = name
        self.role = role
        self.pid = pid
        self.openAccess = openAccess
        self.protocolVersion = protocolVersion
        self.sdk = sdk
        self.timeBudgetMilliseconds = timeBudgetMilliseconds
        self.events = events
        self.endsOnSigterm = endsOnSigterm
    }

    private enum Field {
        static let name = "name", role = "role", pid = "pid", openAccess = "openAccess", protocolVersion = "protocol"
        static let sdk = "sdk", timeBudgetMilliseconds = "timeBudgetMilliseconds", events = "events"
        static let endsOnSigterm = "endsOnSigterm"
    }

    /// Read from a request's params: the version first (a host that cannot
    /// speak it says which it can), then the name (`isValidName`: the
    /// host's rule for names), then the role.
    package init(params: JSONValue?, isValidName: (String) -> Bool = { _ in true }) throws(RPCError) {
        var version = 1
        if let number = try params.optional(Field.protocolVersion, must: "an integer", { $0.intValue }) {
            guard HostProtocol.supported.contains(number) else {
                throw .unsupportedProtocol(.integer(number), supported: HostProtocol.supported)
            }
            version = number
        }
        guard let name = params?[Field.name]?.stringValue, isValidName(name) else { throw Self.invalidName }
        guard let role = params?[Field.role]?.stringValue else { throw Self.invalidRole }
        self.init(name: name, role: role, pid: try params.optional(Field.pid, must: "an integer") { $0.intValue }
                    .map { Int32(clamping: $0) },
                  openAccess: try params.optional(Field.openAccess, must: "true or false") { $0.boolValue },
                  protocolVersion: version,
                  sdk: try params.optional(Field.sdk, must: "a string") { $0.stringValue },
                  timeBudgetMilliseconds: try params.optional(Field.timeBudgetMilliseconds, must: "a positive integer (milliseconds)") {
                      $0.intValue.flatMap { $0 > 0 ? UInt64($0) : nil }
                  },
                  events: try params.optionalStrings(Field.events) ?? [],
                  endsOnSigterm: try params.optional(Field.endsOnSigterm, must: "true or false") { $0.boolValue } ?? false)
    }

    package var json: JSONValue {
        var object: [String: JSONValue] = [Field.name: .string(name), Field.role: .string(role),
                                           Field.protocolVersion: .integer(protocolVersion)]
        if let pid { object[Field.pid] = .integer(Int(pid)) }
        if let openAccess { object[Field.openAccess] = .bool(openAccess) }
        if let sdk { object[Field.sdk] = .string(sdk) }
        if let timeBudgetMilliseconds { object[Field.timeBudgetMilliseconds] = .integer(timeBudgetMilliseconds) }
        if !events.isEmpty { object[Field.events] = .array(events.map(JSONValue.string)) }
        if endsOnSigterm { object[Field.endsOnSigterm] = .bool(true) }
        return .object(object)
    }

    /// A name that is no string, or not an extension's name.
    package static let invalidName = RPCError.invalidParams("\"\(Field.name)\" must be an extension name")
    /// A role that is no string, or not one of the three.
    package static let invalidRole = RPCError.invalidParams("\"\(Field.role)\" must be widget, keyboard or notification")
}
