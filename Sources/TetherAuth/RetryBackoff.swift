/// Bounded exponential backoff with "equal jitter" (AWS architecture blog,
/// "Exponential Backoff And Jitter"): retry n waits a random time between
/// half and all of min(cap, base·2ⁿ⁻¹), so processes that failed together
/// do not retry together, and none retries at once.
public struct RetryBackoff: Sendable {
    public var attempts: Int
    public var base: Double
    public var cap: Double

    public init(attempts: Int = 4, base: Double = 0.2, cap: Double = 2) {
        self.attempts = attempts
        self.base = base
        self.cap = cap
    }

    /// Seconds to wait before retry `attempt` (1-based): within 0 and an
    /// hour whatever `base` and `cap` are (a NaN or negative one is 0).
    public func delay(beforeRetry attempt: Int) -> Double {
        let ceiling = min(cap, base * Double(1 << min(max(attempt - 1, 0), 20)))
        guard ceiling.isFinite, ceiling > 0 else { return 0 }
        let bounded = min(ceiling, 3_600)
        return bounded / 2 + Double.random(in: 0...(bounded / 2))
    }
}
