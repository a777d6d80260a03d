import Testing
import TetherIPC
@testable import TetherHost

/// One extension's pushes on the desktop: a burst of five, then one every
/// two seconds; what comes faster is held and shown as one summary.
@Suite struct DesktopPaceTests {
    func note(_ title: String) -> DesktopNotification { DesktopNotification(title: title) }

    @Test func aBurstIsShownThenTheRestIsCoalescedIntoOneSummaryPerTurn() throws {
        var pace = DesktopPace()
        for index in 0..<5 { #expect(pace.admit("w", note("n\(index)"), now: 1_000) == .show) }
        // The sixth arms the summary's timer; the rest wait with it.
        #expect(pace.admit("w", note("n5"), now: 1_000) == .coalesced(flushAfter: 2_000))
        for index in 6..<1_000 { #expect(pace.admit("w", note("n\(index)"), now: 1_500) == .coalesced(flushAfter: nil)) }
        // Early: wait for the rest of the turn.
        guard case .failure(let early) = pace.due("w", now: 2_000) else { throw Unexpected() }
        #expect(early.milliseconds == 1_000)
        let summary = try pace.due("w", now: 3_000).get()
        #expect(summary.notification.title == "n999" && summary.count == 995 && summary.replacing == nil)
        pace.summaryShown("w", as: 77)
        // Nothing held: nothing due.
        guard case .failure(let idle) = pace.due("w", now: 3_000) else { throw Unexpected() }
        #expect(idle.milliseconds == nil)
        // The next holds at once (no token left) and replaces the summary.
        #expect(pace.admit("w", note("late"), now: 3_000) == .coalesced(flushAfter: 2_000))
        #expect(try pace.due("w", now: 5_000).get().replacing == 77)
        // Another sender has a bucket of its own.
        #expect(pace.admit("other", note("x"), now: 5_000) == .show)
        // Idle long enough, the burst is back.
        for index in 0..<5 { #expect(pace.admit("w", note("again\(index)"), now: 60_000) == .show) }
    }

    @Test func sendersAreForgottenOnceIdlePastTheTablesBound() {
        var pace = DesktopPace()
        for index in 0..<DesktopPace.maximumSenders { _ = pace.admit("s\(index)", note("x"), now: 0) }
        #expect(pace.count == DesktopPace.maximumSenders)
        // Their buckets refilled: all forgotten for the newcomer.
        _ = pace.admit("new", note("x"), now: 60_000)
        #expect(pace.count == 1)
    }

    /// The server went: a summary shown there is no summary to replace
    /// on the next (its number is another application's there now).
    @Test func theServerGoneASummaryIsNotReplacedByNumber() throws {
        var pace = DesktopPace()
        for index in 0..<6 { _ = pace.admit("w", note("n\(index)"), now: 1_000) }
        _ = try pace.due("w", now: 3_000).get()
        pace.summaryShown("w", as: 77)
        pace.forgetSummaries()
        #expect(pace.admit("w", note("late"), now: 3_000) == .coalesced(flushAfter: 2_000))
        #expect(try pace.due("w", now: 5_000).get().replacing == nil)
    }

    struct Unexpected: Error {}
}
