import TetherLoop

/// When to restart a crashed extension, on the one `Backoff`: 100 ms,
/// doubling to 30 s. A process that ran for `stableAfter` starts the count
/// over; `crashLoopLimit` quick failures in a row are a crash loop, and the
/// extension is given up.
struct CrashLoopDetector: Sendable, Equatable {
    static let stableAfter: UInt64 = 10_000
    static let crashLoopLimit = 5
    /// Also the schedule for retries that are not the extension's fault
    /// (a resource ran out at spawn), which never give up.
    static var schedule: Backoff { Backoff(first: 100, maximum: 30_000) }

    private var backoff = Self.schedule

    /// Records an exit after `ranFor` ms; the delay before the next start,
    /// or nil for a crash loop.
    mutating func delayAfterFailure(ranFor: UInt64) -> UInt64? {
        if ranFor >= Self.stableAfter { backoff.reset() }
        let delay = backoff.next()
        return backoff.failures < Self.crashLoopLimit ? delay : nil
    }
}
