import Foundation
import Testing
@testable import TetherExtension

/// When a widget's timer fires for an entry or a reload: whatever date a
/// widget returns (past, NaN, infinitely far), never a trap, never a
/// busy loop, never a wait past a year.
@Suite struct TimelineTimingTests {
    typealias Driver = WidgetDriver<ClockWidget>

    struct ClockWidget: Widget {
        func timeline(for reason: ReloadReason, in context: ExtensionContext) async throws -> Timeline {
            Timeline(entries: [], policy: .never)
        }
    }

    @Test func aDateInThePastIsDueNow() {
        #expect(Driver.milliseconds(until: Date(timeIntervalSinceNow: -60)) == 0)
        #expect(Driver.milliseconds(until: Date(timeIntervalSince1970: 0)) == 0)
    }

    @Test func aDateAheadIsWaitedForRoundedUpToTheMillisecond() {
        let wait = Driver.milliseconds(until: Date(timeIntervalSinceNow: 2.0005))
        #expect(wait >= 1_999 && wait <= 2_001)
        #expect(Driver.milliseconds(until: Date(timeIntervalSinceNow: 0.0000001)) <= 1)
    }

    @Test func aDateNoClockReachesIsCappedAtAYear() {
        let year = UInt64(365 * 86_400 * 1000)
        #expect(Driver.milliseconds(until: .distantFuture) == year)
        #expect(Driver.milliseconds(until: Date(timeIntervalSinceReferenceDate: .infinity)) == year)
        #expect(Driver.milliseconds(until: Date(timeIntervalSinceReferenceDate: .greatestFiniteMagnitude)) == year)
    }

    @Test func aDateThatIsNoNumberIsDueNowNotATrap() {
        #expect(Driver.milliseconds(until: Date(timeIntervalSinceReferenceDate: .nan)) == 0)
        #expect(Driver.milliseconds(until: Date(timeIntervalSinceReferenceDate: -.infinity)) == 0)
    }
}
