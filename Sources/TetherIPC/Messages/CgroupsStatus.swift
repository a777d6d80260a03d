import TetherJSON

/// Whether the host's extensions run in cgroups of their own (`memory.max`,
/// `pids.max` per extension), as `host.status` carries it (`cgroups`) and
/// `tether status` says it in one line: where not, why (no delegated
/// cgroup, no user service manager on D-Bus to ask for a scope) and the fix.
package struct CgroupsStatus: Sendable, Equatable {
    /// The delegated subtree extensions' cgroups are made in; nil: none.
    package var path: String?
    package var controllers: [String]
    /// Why there is none.
    package var reason: String?
    package var fix: String?

    package init(path: String? = nil, controllers: [String] = [], reason: String? = nil, fix: String? = nil) {
        self.path = path
        self.controllers = controllers
        self.reason = reason
        self.fix = fix
    }

    private enum Field {
        static let delegated = "delegated", path = "path", controllers = "controllers", reason = "reason", fix = "fix"
    }

    /// Read leniently; nil from a host of an older release, which does not say.
    package init?(json: JSONValue?) {
        guard let json, json[Field.delegated]?.boolValue != nil else { return nil }
        self.init(path: json[Field.path]?.stringValue, controllers: json[Field.controllers]?.arrayValue?.compactMap(\.stringValue) ?? [],
                  reason: json[Field.reason]?.stringValue, fix: json[Field.fix]?.stringValue)
    }

    package var json: JSONValue {
        var object: [String: JSONValue] = [Field.delegated: .bool(path != nil), Field.controllers: .array(controllers.map(JSONValue.string))]
        if let path { object[Field.path] = .string(path) }
        if let reason { object[Field.reason] = .string(reason) }
        if let fix { object[Field.fix] = .string(fix) }
        return .object(object)
    }

    /// `tether status`'s line.
    package var text: String {
        if let path {
            let held = controllers.isEmpty ? "no controllers: memory by RLIMIT_DATA" : controllers.joined(separator: ", ")
            return "cgroups: each extension in its own under \(path) (\(held))"
        }
        let fix = fix.map { "; fix: \($0)" } ?? ""
        return "cgroups: none, so memory by RLIMIT_DATA and no pids cap: \(reason ?? "no delegated cgroup")\(fix)"
    }
}
