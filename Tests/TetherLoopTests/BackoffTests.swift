import Testing
import TetherLoop

@Suite struct BackoffTests {
    @Test func doublesFromFirstToMaximumAndStartsOverAfterAReset() {
        var backoff = Backoff(first: 5, maximum: 1_000)
        #expect((0..<10).map { _ in backoff.next() } == [5, 10, 20, 40, 80, 160, 320, 640, 1_000, 1_000])
        backoff.reset()
        #expect(backoff.next() == 5)
    }

    /// "Equal jitter": between half and all of the unjittered wait, and
    /// not the same for everyone.
    @Test func jitteredWaitsStayBetweenHalfAndAllAndDiffer() {
        let backoff = Backoff(first: 200, maximum: 2_000, jittered: true)
        for attempt in 1...6 {
            let ceiling = Backoff(first: 200, maximum: 2_000).delay(beforeRetry: attempt)
            let waits = (0..<200).map { _ in backoff.delay(beforeRetry: attempt) }
            #expect(waits.allSatisfy { $0 >= ceiling / 2 && $0 <= ceiling }, "attempt \(attempt)")
            #expect(Set(waits).count > 1, "attempt \(attempt)")
        }
    }

    /// Any attempt count and any bounds: no overflow, never past the maximum.
    @Test func extremeAttemptsAndBoundsStayWithinTheMaximum() {
        let third = UInt64.max / 3
        let backoff = Backoff(first: third, maximum: .max)
        #expect(backoff.delay(beforeRetry: 1) == third)
        #expect(backoff.delay(beforeRetry: 64) == UInt64.max)
        #expect(backoff.delay(beforeRetry: Int.max) == UInt64.max)
        #expect(backoff.delay(beforeRetry: Int.min) == third)
        #expect(Backoff(first: 0, maximum: 0).delay(beforeRetry: 3) == 1)
    }
}
