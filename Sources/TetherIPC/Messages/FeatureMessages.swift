import TetherJSON

/// `feature.start`'s answer: whether this call started it (false: it was
/// running already) in the host of pid `pid`.
package struct FeatureStarted: WireMessage, Equatable {
    package var name: String
    package var started: Bool
    package var pid: Int64

    package init(name: String, started: Bool, pid: Int64) {
        self.name = name
        self.started = started
        self.pid = pid
    }

    private enum Field { static let name = "name", started = "started", pid = "pid" }

    package init(wire: JSONValue?) throws(RPCError) {
        guard let name = wire?[Field.name]?.stringValue, let started = wire?[Field.started]?.boolValue else {
            throw .invalidParams("not a started feature")
        }
        self.init(name: name, started: started, pid: Int64(wire?[Field.pid]?.intValue ?? 0))
    }

    package var wire: JSONValue { [Field.name: .string(name), Field.started: .bool(started), Field.pid: .integer(Int(pid))] }
}

/// `feature.stop`'s answer.
package struct FeatureStopped: WireMessage, Equatable {
    package var name: String

    package init(name: String) { self.name = name }

    private enum Field { static let name = "name", stopped = "stopped" }

    package init(wire: JSONValue?) throws(RPCError) {
        guard let name = wire?[Field.name]?.stringValue else { throw .invalidParams("not a stopped feature") }
        self.name = name
    }

    package var wire: JSONValue { [Field.name: .string(name), Field.stopped: true] }
}

/// `feature.list`'s answer: every feature whose lock is held, by the host
/// or by anyone else (`tether probe feature NAME` agrees).
package struct FeatureListing: WireMessage, Equatable {
    package struct Running: Equatable, Sendable {
        package enum Owner: String, Sendable { case host, other }
        package var name: String
        package var pid: Int64?
        /// When its holder took the lock (ISO 8601).
        package var since: String?
        package var owner: Owner

        package init(name: String, pid: Int64?, since: String?, owner: Owner) {
            self.name = name
            self.pid = pid
            self.since = since
            self.owner = owner
        }
    }

    package var features: [Running]

    package init(_ features: [Running]) { self.features = features }

    private enum Field { static let name = "name", pid = "pid", since = "since", owner = "owner" }

    /// Read leniently, as from a host of another release.
    package init(wire: JSONValue?) throws(RPCError) {
        guard let items = wire?.arrayValue else { throw .invalidParams("not a list of features") }
        features = items.compactMap { item in
            item[Field.name]?.stringValue.map { name in
                Running(name: name, pid: item[Field.pid]?.intValue.map(Int64.init), since: item[Field.since]?.stringValue,
                        owner: Running.Owner(rawValue: item[Field.owner]?.stringValue ?? "") ?? .other)
            }
        }
    }

    package var wire: JSONValue {
        .array(features.map { feature in
            [Field.name: .string(feature.name), Field.pid: feature.pid.map { .integer(Int($0)) } ?? .null,
             Field.since: feature.since.map(JSONValue.string) ?? .null, Field.owner: .string(feature.owner.rawValue)]
        })
    }
}
