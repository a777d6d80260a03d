import Testing
@testable import TetherHost

@Suite struct CrashLoopDetectorTests {
    @Test func quickFailuresDoubleFromOneHundredMillisecondsUntilTheCrashLoopLimit() {
        var detector = CrashLoopDetector()
        #expect(detector.delayAfterFailure(ranFor: 50) == 100)
        #expect(detector.delayAfterFailure(ranFor: 50) == 200)
        #expect(detector.delayAfterFailure(ranFor: 50) == 400)
        #expect(detector.delayAfterFailure(ranFor: 50) == 800)
        #expect(detector.delayAfterFailure(ranFor: 50) == nil, "the fifth quick failure is a crash loop")
    }

    @Test func aRunOfTenSecondsResetsTheCount() {
        var detector = CrashLoopDetector()
        _ = detector.delayAfterFailure(ranFor: 50)
        _ = detector.delayAfterFailure(ranFor: 50)
        #expect(detector.delayAfterFailure(ranFor: 9_999) == 400)
        #expect(detector.delayAfterFailure(ranFor: 10_000) == 100, "a stable run starts over")
    }

    /// Resource shortages at spawn are retried without end, doubling to 30 s.
    @Test func resourceRetriesDoubleToThirtySecondsAndStayThere() {
        var delay = CrashLoopDetector.schedule
        let delays = (0..<12).map { _ in delay.next() }
        #expect(Array(delays.prefix(4)) == [100, 200, 400, 800])
        #expect(delays.last == 30_000)
        #expect(delays.allSatisfy { $0 <= 30_000 })
    }
}
