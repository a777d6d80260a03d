import Testing
@testable import TetherHost

@Suite struct RestartBackoffTests {
    @Test func quickFailuresDoubleFromOneHundredMillisecondsUntilTheCrashLoopLimit() {
        var backoff = RestartBackoff()
        #expect(backoff.delayAfterFailure(ranFor: 50) == 100)
        #expect(backoff.delayAfterFailure(ranFor: 50) == 200)
        #expect(backoff.delayAfterFailure(ranFor: 50) == 400)
        #expect(backoff.delayAfterFailure(ranFor: 50) == 800)
        #expect(backoff.delayAfterFailure(ranFor: 50) == nil, "the fifth quick failure is a crash loop")
    }

    @Test func aRunOfTenSecondsResetsTheCount() {
        var backoff = RestartBackoff()
        _ = backoff.delayAfterFailure(ranFor: 50)
        _ = backoff.delayAfterFailure(ranFor: 50)
        #expect(backoff.delayAfterFailure(ranFor: 9_999) == 400)
        #expect(backoff.delayAfterFailure(ranFor: 10_000) == 100, "a stable run starts over")
    }

    /// Resource shortages at spawn are retried without end, doubling to 30 s.
    @Test func resourceRetriesDoubleToThirtySecondsAndStayThere() {
        var delay = RetryDelay()
        let delays = (0..<12).map { _ in delay.next() }
        #expect(Array(delays.prefix(4)) == [100, 200, 400, 800])
        #expect(delays.last == 30_000)
        #expect(delays.allSatisfy { $0 <= 30_000 })
    }
}
