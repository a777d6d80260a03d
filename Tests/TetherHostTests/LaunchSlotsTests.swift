import Testing
@testable import TetherHost

/// Slots for what runs under the descriptor limit: taken before a spawn,
/// given back at its end, refused with the fix when all are taken.
@Suite struct LaunchSlotsTests {
    @Test func aLaunchWaitsWhenEverySlotIsTakenAndIsToldTheFix() {
        let slots = LaunchSlots(capacity: 2, softLimit: 1024)
        #expect(slots.take() && slots.take())
        #expect(slots.isFull)
        #expect(!slots.take(), "a third")
        #expect(slots.inUse == 2)
        #expect(slots.refusal == "2 extension(s) run, the most the host's descriptor limit (1024) leaves room for; "
            + "stop one, or raise the limit (LimitNOFILE= in its unit, ulimit -n)")
        slots.give()
        #expect(!slots.isFull && slots.take())
        // Given back more often than taken, the count stops at none.
        for _ in 0..<3 { slots.give() }
        #expect(slots.inUse == 0)
        #expect(slots.take() && slots.take() && !slots.take())
    }

    @Test func noSlotsMeansNoLaunch() {
        let slots = LaunchSlots(capacity: 0, softLimit: 16)
        #expect(slots.isFull && !slots.take())
    }
}
