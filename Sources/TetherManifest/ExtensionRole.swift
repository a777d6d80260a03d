/// What an extension does for the host, modelled on iOS extension points.
/// Shared by manifests, the host (routing), the sandbox (what each role may
/// do) and the SDK (the hello message).
public enum ExtensionRole: String, Sendable, CaseIterable {
    /// A timeline provider; reloads when asked.
    case widget
    /// Interactive: key presses in, feature questions and requests out.
    case keyboard
    /// A notification service: rewrites push payloads within a time budget.
    case notification
}

extension ExtensionRole {
    /// The default `memoryLimitMiB` of each role: the example extension's
    /// peak `VmData` (what `RLIMIT_DATA` counts: heap, thread stacks and
    /// other private writable mappings, reserved or not) with about twice
    /// that as headroom. The measurement is in the README.
    package var defaultMemoryLimitMiB: Int {
        switch self {
        case .widget: 128        // measured 45 MiB with SwiftNIO's threads (before HTTP moved to libcurl)
        case .keyboard: 96       // measured 37 MiB
        case .notification: 128  // measured 53 MiB
        }
    }
}
