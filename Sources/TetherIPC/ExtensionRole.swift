/// What an extension does for the host, modelled on iOS extension points.
/// Shared by the host (manifests, routing) and the SDK (the hello message).
public enum ExtensionRole: String, Sendable, CaseIterable, Codable {
    /// A timeline provider; reloads when asked.
    case widget
    /// Interactive: key presses in, feature questions and requests out.
    case keyboard
    /// A notification service: rewrites push payloads within a time budget.
    case notification
}
