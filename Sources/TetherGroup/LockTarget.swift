/// What a liveness lock stands for: the host itself, one named feature, or
/// one running extension.
public enum LockTarget: Sendable, Hashable, CustomStringConvertible {
    /// The host (`locks/host.lock`).
    case host
    /// A feature an extension or a process holds while it is alive.
    case feature(FeatureName)
    /// One running instance of an extension (held while it runs).
    case extensionInstance(FeatureName)

    /// "host" or "feature", as in the CLI and JSON.
    package var kind: String {
        switch self {
        case .host: "host"
        case .feature: "feature"
        case .extensionInstance: "extension"
        }
    }

    /// The name reported in JSON: "host" for the host.
    public var name: String {
        switch self {
        case .host: "host"
        case .feature(let name), .extensionInstance(let name): name.rawValue
        }
    }

    /// "the host", "feature 'NAME'" or "extension 'NAME'", for messages.
    public var description: String {
        switch self {
        case .host: "the host"
        case .feature(let name): "feature '\(name)'"
        case .extensionInstance(let name): "extension '\(name)'"
        }
    }
}

extension LockTarget {
    /// What a holder writes into the lock file: "host" or "feature NAME".
    package var label: String {
        switch self {
        case .host: "host"
        case .feature(let name): "feature \(name.rawValue)"
        case .extensionInstance(let name): "extension \(name.rawValue)"
        }
    }
}
