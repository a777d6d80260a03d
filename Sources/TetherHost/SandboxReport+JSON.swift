import TetherJSON
import TetherSandbox

extension SandboxReport {
    var json: JSONValue {
        var object: [String: JSONValue] = [
            "files": .string(files), "network": .string(networkDenied ? "denied" : "allowed"),
            "signals": .string(signalsScoped ? "scoped" : "none"),
            "memoryLimitMiB": memoryLimitMiB.map { .integer($0) } ?? .null,
        ]
        if let memoryBy { object["memoryBy"] = .string(memoryBy) }
        object["secrets"] = .string(secretsHidden ? "hidden" : "readable")
        object["world"] = .string(world ? "own" : "machine")
        if let cgroup { object["cgroup"] = .string(cgroup) }
        return .object(object)
    }
}
