/// Exponential backoff, the one schedule every retry in Tether uses: wait
/// `first` milliseconds, then twice that, up to `maximum`. Jittered, each
/// wait is a random time between half and all of it ("equal jitter", AWS
/// architecture blog, "Exponential Backoff And Jitter"), so processes that
/// failed together do not retry together, and none retries at once.
package struct Backoff: Sendable, Equatable {
    package let first: UInt64
    package let maximum: UInt64
    package let jittered: Bool
    /// Failures since the last `reset()`.
    package private(set) var failures = 0

    package init(first: UInt64, maximum: UInt64, jittered: Bool = false) {
        self.first = max(first, 1)
        self.maximum = max(maximum, self.first)
        self.jittered = jittered
    }

    /// The wait before retry `attempt` (1-based), recording nothing.
    package func delay(beforeRetry attempt: Int) -> UInt64 {
        let exponent: UInt64 = attempt <= 1 ? 0 : UInt64(min(attempt - 1, 40))
        let (doubled, overflow) = first.multipliedReportingOverflow(by: 1 << exponent)
        let ceiling = overflow ? maximum : min(maximum, doubled)
        guard jittered, ceiling > 1 else { return ceiling }
        return ceiling / 2 + UInt64.random(in: 0...(ceiling - ceiling / 2))
    }

    /// Records a failure; the wait before trying again.
    package mutating func next() -> UInt64 {
        failures += 1
        return delay(beforeRetry: failures)
    }

    /// A success: the next failure waits `first` again.
    package mutating func reset() { failures = 0 }
}
