import Testing
@testable import TetherHost

/// An extension's leftovers: a peer in a group being cleared is still the
/// extension's, and what waits for the clearing runs once, when the last
/// of several clearings ends, never before.
@Suite struct LeftoversTests {
    @Test func whatWaitsRunsOnceWhenTheLastClearingEnds() {
        var leftovers = Leftovers()
        var ran = 0
        #expect(!leftovers.whenCleared { ran += 1 }, "nothing to wait for: the caller goes on")
        leftovers.began(group: 100)
        leftovers.began(group: 0)  // a launch with no group of its own
        #expect(leftovers.isClearing)
        #expect(leftovers.holds(pid: 100, group: 1) && leftovers.holds(pid: 7, group: 100))
        #expect(!leftovers.holds(pid: 7, group: 8))
        #expect(leftovers.whenCleared { ran += 1 })
        for then in leftovers.ended(group: 100) { then() }
        #expect(ran == 0, "one clearing still runs")
        #expect(!leftovers.holds(pid: 100, group: 100), "a cleared group is no longer its own")
        for then in leftovers.ended(group: 0) { then() }
        #expect(ran == 1 && !leftovers.isClearing)
        leftovers.began(group: 200)
        for then in leftovers.ended(group: 200) { then() }
        #expect(ran == 1, "run once only")
    }
}
