import Testing
import TetherLoop
import TetherTestSupport
@testable import TetherHost

/// Watchdogs of one period tick together whenever each joined, so an idle
/// host wakes once a period for all of them; one that leaves mid-tick is
/// not ticked again, and the rest go on.
@Suite(.timed) struct WatchdogClockTests {
    final class Member: WatchdogTicking {
        let periodMilliseconds: UInt64
        let loop: EventLoop
        var ticks: [UInt64] = []
        var onTick: (Member) -> Void = { _ in }
        init(_ period: UInt64, loop: EventLoop) { periodMilliseconds = period; self.loop = loop }
        func tick() {
            ticks.append(loop.now)
            onTick(self)
        }
    }

    @Test func membersThatJoinedApartTickTogether() async throws {
        let rounds: [[UInt64]] = try await onLoop { loop, finish in
            let clock = WatchdogClock(loop: loop)
            var members: [Member] = []
            // Three join 40 ms apart, within a period of 150 ms; one of another period apart.
            for index in 0..<3 {
                LoopTimer(loop: loop).start(afterMilliseconds: UInt64(index) * 40) {
                    let member = Member(150, loop: loop)
                    members.append(member)
                    clock.add(member)
                    if index == 2 {
                        member.onTick = { last in
                            guard last.ticks.count == 3 else { return }
                            // Once the rest of this round has ticked.
                            LoopTimer(loop: loop).start(afterMilliseconds: 0) {
                                for other in members { clock.remove(other) }
                                finish(members.map(\.ticks))
                            }
                        }
                    }
                }
            }
        }
        // Each tick of the last to join is the others' tick too.
        let last = try #require(rounds.last)
        for ticks in rounds.dropLast() { #expect(Array(ticks.suffix(3)) == last, "\(rounds)") }
    }

    @Test func aMemberRemovedByAnothersTickIsNotTickedAgain() async throws {
        let (first, second): (Int, Int) = try await onLoop { loop, finish in
            let clock = WatchdogClock(loop: loop)
            let a = Member(20, loop: loop), b = Member(20, loop: loop)
            // Whichever ticks first removes the other (a verdict ending a sibling).
            a.onTick = { _ in clock.remove(b) }
            b.onTick = { _ in clock.remove(a) }
            clock.add(a)
            clock.add(b)
            LoopTimer(loop: loop).start(afterMilliseconds: 150) {
                clock.remove(a)
                clock.remove(b)
                finish((a.ticks.count, b.ticks.count))
            }
        }
        // One of them went on alone; the other never ticked.
        #expect(min(first, second) == 0 && max(first, second) >= 2, "\(first) \(second)")
    }
}
