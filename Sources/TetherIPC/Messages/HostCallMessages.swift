import TetherJSON

/// `host.ping`'s answer: the host's pid.
package struct PingAnswer: WireMessage, Equatable {
    package var pid: Int64

    package init(pid: Int64) { self.pid = pid }

    private enum Field { static let pid = "pid" }

    package init(wire: JSONValue?) throws(RPCError) {
        guard let pid = wire?[Field.pid]?.intValue else { throw .invalidParams("\"\(Field.pid)\" is required") }
        self.pid = Int64(pid)
    }

    package var wire: JSONValue { [Field.pid: .integer(pid)] }
}

/// `host.status`'s params: at most `limit` extensions listed (their count
/// is said whole), so that a status bar's poll of a host running thousands
/// stays cheap; all of them when nil.
package struct StatusRequest: WireMessage, Equatable {
    package var limit: Int?

    package init(limit: Int? = nil) { self.limit = limit }

    private enum Field { static let limit = "limit" }

    package init(wire: JSONValue?) throws(RPCError) {
        guard let value = wire?[Field.limit], value != .null else { return }
        guard let limit = value.intValue, limit >= 0 else {
            throw .invalidParams("\"\(Field.limit)\" must be a whole number, 0 or more")
        }
        self.limit = limit
    }

    package var wire: JSONValue { limit.map { [Field.limit: .integer($0)] } ?? .object([:]) }
}

/// A feature or an extension, by name: `feature.start`, `feature.stop`,
/// `extension.start`, `extension.stop`. The host checks the name's rule.
package struct NamedTarget: WireMessage, Equatable {
    package var name: String

    package init(name: String) { self.name = name }

    private enum Field { static let name = "name" }

    package init(wire: JSONValue?) throws(RPCError) {
        guard let name = wire?[Field.name]?.stringValue else { throw .invalidParams("\"\(Field.name)\" is required") }
        self.name = name
    }

    package var wire: JSONValue { [Field.name: .string(name)] }
}

/// `widget.reload`'s params: one widget, or every one.
package struct ReloadRequest: WireMessage, Equatable {
    package var name: String?

    package init(name: String? = nil) { self.name = name }

    private enum Field { static let name = "name" }

    package init(wire: JSONValue?) throws(RPCError) {
        guard let value = wire?[Field.name], value != .null else { return }
        guard let name = value.stringValue else { throw .invalidParams("\"\(Field.name)\" must be a string") }
        self.name = name
    }

    package var wire: JSONValue { name.map { [Field.name: .string($0)] } ?? .object([:]) }
}

/// `host.metrics`'s answer: the Prometheus text exposition.
package struct MetricsAnswer: WireMessage, Equatable {
    package static let prometheusContentType = "text/plain; version=0.0.4"
    package var contentType: String
    package var text: String

    package init(text: String, contentType: String = MetricsAnswer.prometheusContentType) {
        self.text = text
        self.contentType = contentType
    }

    private enum Field { static let contentType = "contentType", text = "text" }

    package init(wire: JSONValue?) throws(RPCError) {
        guard let text = wire?[Field.text]?.stringValue else {
            throw .invalidParams("the host answered host.metrics without text (is it an older version?)")
        }
        self.init(text: text, contentType: wire?[Field.contentType]?.stringValue ?? "")
    }

    package var wire: JSONValue { [Field.contentType: .string(contentType), Field.text: .string(text)] }
}
