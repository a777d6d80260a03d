import Testing
@testable import TetherGroup

/// Every wait for a lock holder looks again on one schedule after an event.
@Suite struct LockRecheckTests {
    func looks(_ recheck: inout LockRecheck) -> [UInt64] {
        var delays: [UInt64] = []
        for _ in 0..<20 {
            guard let delay = recheck.delay else { break }
            delays.append(delay)
            recheck.lookedAgain()
        }
        return delays
    }

    @Test func noLookIsDueBeforeAnEventThenEightDoublingTo128Milliseconds() {
        var recheck = LockRecheck()
        #expect(recheck.delay == nil)
        recheck.lookedAgain()
        #expect(recheck.delay == nil)
        recheck.eventSeen()
        #expect(looks(&recheck) == [1, 2, 4, 8, 16, 32, 64, 128])
        #expect(recheck.delay == nil)
    }

    @Test func anEventStartsTheLooksAgainFromTheFirst() {
        var recheck = LockRecheck()
        recheck.eventSeen()
        recheck.lookedAgain()
        recheck.lookedAgain()
        #expect(recheck.delay == 4)
        recheck.eventSeen()
        #expect(looks(&recheck) == [1, 2, 4, 8, 16, 32, 64, 128])
    }
}
