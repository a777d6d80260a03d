/// The answer to "is it running?".
public struct LockStatus: Sendable, Equatable {
    /// Whether a live process holds the lock.
    public var running: Bool
    /// Known when running and the holder can be identified.
    public var holder: HolderInfo?

    package init(running: Bool, holder: HolderInfo? = nil) {
        self.running = running
        self.holder = holder
    }

    package static let notRunning = LockStatus(running: false)
}
