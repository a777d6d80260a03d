import CTetherSystem
import TetherIPC

/// The manifest an extension was built with. The TetherManifest build
/// plugin checks the target's `*.extension.json` at build time and embeds
/// it in the executable, where the SDK finds it (`embedded`) with no line
/// of the author's. Then the executable names itself after the manifest,
/// refuses to run in another role, and `EXECUTABLE --manifest` prints the
/// manifest to install, with its own path as the executable.
struct EmbeddedManifest: Sendable {
    /// The manifest the build plugin embedded in this executable, or nil
    /// when the plugin was not applied to its target.
    static let embedded: EmbeddedManifest? = {
        var length = 0
        guard let start = tether_find_embedded_manifest(&length), length > 0 else { return nil }
        return EmbeddedManifest(json: String(decoding: UnsafeBufferPointer(start: start, count: length), as: UTF8.self))
    }()

    /// The manifest as JSON, as the plugin checked it.
    let json: String
    /// Parsed once; the build already checked it.
    let object: [String: JSONValue]

    /// A manifest given as JSON (the plugin generates this call).
    init(json: String) {
        self.json = json
        if let value = try? JSONCodec.parse(Array(json.utf8)), case .object(let object) = value {
            self.object = object
        } else {
            object = [:]
        }
    }

    var name: String? { object["name"]?.stringValue }
    var role: String? { object["role"]?.stringValue }
    var openAccess: Bool { object["openAccess"]?.boolValue ?? false }
    /// Its memory limit: nil for none (0), `.none` when it does not say.
    var memoryLimitMiB: Int?? {
        guard let value = object["memoryLimitMiB"]?.intValue else { return .none }
        return .some(value > 0 ? value : nil)
    }

    /// Its disk limit, if it says one (the host's check refused a bad one).
    var diskLimitMiB: Int? { object["diskLimitMiB"]?.intValue.flatMap { (1...1_048_576).contains($0) ? $0 : nil } }

    /// The manifest with `executable` set to `path` (this process's own).
    func installable(executable path: String) -> String {
        var object = object
        object["executable"] = .string(path)
        return String(decoding: JSONCodec.serialize(.object(object)), as: UTF8.self)
    }
}
