/// Where the host writes: its own messages and its extensions' output
/// lines (already prefixed with the extension's name).
public struct HostLog: Sendable {
    public var info: @Sendable (String) -> Void
    public var error: @Sendable (String) -> Void

    public init(info: @escaping @Sendable (String) -> Void, error: @escaping @Sendable (String) -> Void) {
        self.info = info
        self.error = error
    }
}
