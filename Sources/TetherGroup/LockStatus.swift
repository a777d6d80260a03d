/// The answer to "is it running?".
public struct LockStatus: Sendable, Equatable {
    public var running: Bool
    /// Known when running and the holder can be identified.
    public var holder: HolderInfo?

    public init(running: Bool, holder: HolderInfo? = nil) {
        self.running = running
        self.holder = holder
    }

    public static let notRunning = LockStatus(running: false)
}
