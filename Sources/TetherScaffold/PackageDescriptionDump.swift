import TetherJSON

/// What `swift package dump-package` says of a package: its name, its
/// targets, and the packages it depends on.
struct PackageDescriptionDump {
    struct Dependency {
        let identity: String
        /// The name its declaration gives it (`.package(name:path:)`), by
        /// which alone its targets' dependencies may then name it.
        let name: String?
        /// A local path, or the last part of its URL (without `.git`).
        let path: String?
        let urlName: String?

        /// What a target's dependency names it by: its declared name if it
        /// has one (SwiftPM refuses the identity then), its identity if not.
        var reference: String { name ?? identity }
    }

    let name: String
    let targets: [String: JSONValue]
    let dependencies: [Dependency]

    init?(_ bytes: [UInt8]) {
        guard let root = try? JSONCodec.parse(bytes), let name = root["name"]?.stringValue else { return nil }
        self.name = name
        var targets: [String: JSONValue] = [:]
        for target in root["targets"]?.arrayValue ?? [] {
            if let targetName = target["name"]?.stringValue { targets[targetName] = target }
        }
        self.targets = targets
        var dependencies: [Dependency] = []
        for entry in root["dependencies"]?.arrayValue ?? [] {
            guard case .object(let kinds) = entry else { continue }
            for (kind, value) in kinds {
                guard let detail = value.arrayValue?.first, let identity = detail["identity"]?.stringValue else { continue }
                let remote = detail["location"]?["remote"]?.arrayValue?.first
                let url = remote?["urlString"]?.stringValue ?? remote?.stringValue
                let local = detail["location"]?["local"]?.arrayValue?.first?.stringValue
                let urlName = url.flatMap { $0.split(separator: "/").last }.map { name in
                    String(name.hasSuffix(".git") ? name.dropLast(4) : name[...])
                }
                dependencies.append(Dependency(identity: identity,
                                               name: detail["nameForTargetDependencyResolutionOnly"]?.stringValue,
                                               path: kind == "fileSystem" ? detail["path"]?.stringValue ?? local : local,
                                               urlName: urlName))
            }
        }
        self.dependencies = dependencies
    }
}
