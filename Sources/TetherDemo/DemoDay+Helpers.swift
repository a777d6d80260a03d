import FoundationEssentials
import TetherAuth
import TetherGroup
import TetherJSON
#if canImport(Glibc)
import Glibc
#endif

/// What the day's steps ask of tether and the group.
extension DemoDay {
    func run(_ arguments: [String], input: String? = nil) throws -> DemoProcess.Outcome {
        try stage.run("tether \(arguments.first ?? "")", tether, arguments + ["--group", group], input: input)
    }

    func writeManifest(_ object: [String: JSONValue]) throws {
        let name = object["name"]?.stringValue ?? "extension"
        try Data(JSONCodec.serialize(.object(object)) + [0x0a]).write(to: URL(fileURLWithPath: "\(extensionsDir)/\(name).extension.json"))
    }

    /// The first delivery of a `push --json`.
    func delivery(_ outcome: DemoProcess.Outcome) -> JSONValue? {
        guard outcome.succeeded, let answer = try? JSONCodec.parse(Array(outcome.text.utf8)) else { return nil }
        return answer["delivered"]?.arrayValue?.first
    }

    /// The extensions `tether status --json` lists.
    func listedExtensions() throws -> [JSONValue] {
        let status = try run(["status", "--json"])
        guard let answer = try? JSONCodec.parse(Array(status.text.utf8)) else {
            throw DemoFailure("`tether status --json` failed: \(status.reason)")
        }
        return answer["extensions"]?.arrayValue ?? []
    }

    /// One extension as `tether status --json` lists it.
    func extensionEntry(_ name: String) throws -> JSONValue? {
        try listedExtensions().first { $0["name"]?.stringValue == name }
    }

    /// The pids of the extensions the host started, by name.
    func extensionPIDs() throws -> [String: pid_t] {
        var pids: [String: pid_t] = [:]
        for entry in try listedExtensions() {
            // Only the host's children: the keyboard started by hand is listed too.
            guard entry["managed"]?.boolValue == true else { continue }
            if let name = entry["name"]?.stringValue, let pid = entry["pid"]?.intValue.flatMap({ pid_t(exactly: $0) }) { pids[name] = pid }
        }
        return pids
    }

    func userTokenExpiry() throws -> Double {
        let snapshot = try CredentialStore(group: GroupDirectory(path: group)).snapshot()
        guard let expiresAt = snapshot.tokens(.user)?.expiresAt else { throw DemoFailure("alice's token is gone") }
        return expiresAt
    }
}
