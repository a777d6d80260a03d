import TetherJSON

/// `host.ping`'s answer: the host's pid.
public struct PingAnswer: WireMessage, Equatable {
    public var pid: Int64

    public init(pid: Int64) { self.pid = pid }

    private enum Field { static let pid = "pid" }

    public init(wire: JSONValue?) throws(RPCError) {
        guard let pid = wire?[Field.pid]?.intValue else { throw .invalidParams("\"\(Field.pid)\" is required") }
        self.pid = Int64(pid)
    }

    public var wire: JSONValue { [Field.pid: .integer(pid)] }
}

/// `host.status`'s params: at most `limit` extensions listed (their count
/// is said whole), so that a status bar's poll of a host running thousands
/// stays cheap; all of them when nil.
public struct StatusRequest: WireMessage, Equatable {
    public var limit: Int?

    public init(limit: Int? = nil) { self.limit = limit }

    private enum Field { static let limit = "limit" }

    public init(wire: JSONValue?) throws(RPCError) {
        guard let value = wire?[Field.limit], value != .null else { return }
        guard let limit = value.intValue, limit >= 0 else {
            throw .invalidParams("\"\(Field.limit)\" must be a whole number, 0 or more")
        }
        self.limit = limit
    }

    public var wire: JSONValue { limit.map { [Field.limit: .integer($0)] } ?? .object([:]) }
}

/// A feature or an extension, by name: `feature.start`, `feature.stop`,
/// `extension.start`, `extension.stop`. The host checks the name's rule.
public struct NamedTarget: WireMessage, Equatable {
    public var name: String

    public init(name: String) { self.name = name }

    private enum Field { static let name = "name" }

    public init(wire: JSONValue?) throws(RPCError) {
        guard let name = wire?[Field.name]?.stringValue else { throw .invalidParams("\"\(Field.name)\" is required") }
        self.name = name
    }

    public var wire: JSONValue { [Field.name: .string(name)] }
}

/// `widget.reload`'s params: one widget, or every one.
public struct ReloadRequest: WireMessage, Equatable {
    public var name: String?

    public init(name: String? = nil) { self.name = name }

    private enum Field { static let name = "name" }

    public init(wire: JSONValue?) throws(RPCError) {
        guard let value = wire?[Field.name], value != .null else { return }
        guard let name = value.stringValue else { throw .invalidParams("\"\(Field.name)\" must be a string") }
        self.name = name
    }

    public var wire: JSONValue { name.map { [Field.name: .string($0)] } ?? .object([:]) }
}

/// `host.metrics`'s answer: the Prometheus text exposition.
public struct MetricsAnswer: WireMessage, Equatable {
    public static let prometheusContentType = "text/plain; version=0.0.4"
    public var contentType: String
    public var text: String

    public init(text: String, contentType: String = MetricsAnswer.prometheusContentType) {
        self.text = text
        self.contentType = contentType
    }

    private enum Field { static let contentType = "contentType", text = "text" }

    public init(wire: JSONValue?) throws(RPCError) {
        guard let text = wire?[Field.text]?.stringValue else {
            throw .invalidParams("the host answered host.metrics without text (is it an older version?)")
        }
        self.init(text: text, contentType: wire?[Field.contentType]?.stringValue ?? "")
    }

    public var wire: JSONValue { [Field.contentType: .string(contentType), Field.text: .string(text)] }
}
