/// When to restart a crashed extension: 100 ms, doubling to a 30 s cap. A
/// process that ran for `stableAfter` resets the count; `crashLoopLimit`
/// quick failures in a row mean a crash loop, and the extension is given up.
public struct RestartBackoff: Sendable, Equatable {
    public static let firstDelay: UInt64 = 100
    public static let maximumDelay: UInt64 = 30_000
    public static let stableAfter: UInt64 = 10_000
    public static let crashLoopLimit = 5

    public private(set) var quickFailures = 0

    public init() {}

    /// Records an exit after `ranFor` ms; the delay before the next start,
    /// or nil for a crash loop.
    public mutating func delayAfterFailure(ranFor: UInt64) -> UInt64? {
        quickFailures = ranFor >= Self.stableAfter ? 1 : quickFailures + 1
        guard quickFailures < Self.crashLoopLimit else { return nil }
        let exponent = UInt64(min(quickFailures - 1, 16))
        return min(Self.maximumDelay, Self.firstDelay << exponent)
    }
}

/// RestartBackoff's schedule (100 ms doubling to 30 s) without the crash-loop
/// limit: for waits on the environment, which are not the extension's fault.
struct RetryDelay {
    private var upcoming = RestartBackoff.firstDelay

    mutating func next() -> UInt64 {
        defer { upcoming = min(RestartBackoff.maximumDelay, upcoming * 2) }
        return upcoming
    }
}
