import TetherGroup

/// What an extension could not do, as one sentence for its output.
public enum ExtensionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The request needs the host, and none is attached.
    case hostNotRunning
    /// A write to the group by an extension without open access.
    case readOnly(extension: String)
    /// The host (or the group) said no; the reason is in the text.
    case refused(String)
    /// A name that is not a valid feature or file name.
    case invalidName(String)
    /// The group directory or the socket failed.
    case environment(String)
    /// The task waiting for it was cancelled (a push past its budget).
    case cancelled

    public var description: String {
        switch self {
        case .hostNotRunning:
            return "host is not running"
        case .readOnly(let name):
            return "'\(name)' has read-only access to the group (set \"openAccess\": true in its manifest)"
        case .refused(let reason), .environment(let reason):
            return reason
        case .cancelled:
            return "cancelled"
        case .invalidName(let name):
            return "invalid name \(quotedInput(name)): use 1 to 64 characters from a-z, 0-9, '.', '_' and '-'"
        }
    }
}
