import Testing
import TetherIPC
@testable import TetherHost

/// The pushes in flight, with their events and actions, no processes.
@Suite struct PushDeskTests {
    final class Delivery {}
    final class Peer {}

    typealias Desk = PushDesk<Delivery>

    static func admitted(_ desk: inout Desk, _ sender: ObjectIdentifier, bytes: Int)
        -> (ticket: Desk.Ticket, ending: [Desk.Ending])? {
        guard case .success(let (ticket, ending)) = desk.admit(sender, bytes: bytes) else { return nil }
        return (ticket, ending)
    }

    /// Past the total, the largest holder's pushes are ended to make room,
    /// and their bytes are free at once: their answers change nothing.
    @Test func aSmallPushMakesRoomByEndingTheLargestHoldersPushes() throws {
        let (small, large) = (Peer(), Peer())
        let (a, b) = (ObjectIdentifier(small), ObjectIdentifier(large))
        var desk = Desk(limits: .init(pushesPerSender: 4, bytesPerSender: 100, totalBytes: 150))
        let (first, second) = (Delivery(), Delivery())
        let big = try #require(Self.admitted(&desk, b, bytes: 70))
        desk.attach(first, to: big.ticket)
        let bigger = try #require(Self.admitted(&desk, b, bytes: 30))
        desk.attach(second, to: bigger.ticket)
        let mine = try #require(Self.admitted(&desk, a, bytes: 10))
        #expect(mine.ending.isEmpty)
        #expect(desk.ledger.totalBytes == 110)
        let room = try #require(Self.admitted(&desk, a, bytes: 50))
        #expect(room.ending.count == 1)
        #expect(room.ending.first?.heldBytes == 110)
        #expect(Set(room.ending.first?.deliveries.map(ObjectIdentifier.init) ?? [])
            == [ObjectIdentifier(first), ObjectIdentifier(second)])
        #expect(desk.ledger.totalBytes == 60, "the ended pushes' bytes are free at once")
        // Ending them answers them: nothing is released twice.
        desk.settled(big.ticket)
        desk.answered(big.ticket)
        desk.answered(bigger.ticket)
        #expect(desk.ledger.totalBytes == 60)
        #expect(desk.ledger.held[b] == nil)
    }

    /// A push that settled waits for the desktop: it can no longer be
    /// ended, it holds its bytes until answered, and a refusal ends nothing.
    @Test func aSettledPushHoldsItsBytesUntilAnsweredAndARefusalEndsNothing() throws {
        let (small, large, other) = (Peer(), Peer(), Peer())
        let (a, b, c) = (ObjectIdentifier(small), ObjectIdentifier(large), ObjectIdentifier(other))
        var desk = Desk(limits: .init(pushesPerSender: 4, bytesPerSender: 100, totalBytes: 150))
        let showing = try #require(Self.admitted(&desk, b, bytes: 90))
        desk.attach(Delivery(), to: showing.ticket)
        desk.settled(showing.ticket)
        let endable = Delivery()
        let running = try #require(Self.admitted(&desk, c, bytes: 40))
        desk.attach(endable, to: running.ticket)
        // The largest holder has nothing that can be ended: refused, and
        // the other sender's push is left alone.
        guard case .failure(let refusal) = desk.admit(a, bytes: 30) else {
            Issue.record("admitted past the total")
            return
        }
        #expect(refusal.message.contains("130 bytes of pushes in flight"))
        #expect(desk.ledger.totalBytes == 130)
        #expect(desk.removeEndable(of: b).isEmpty, "a settled push is not ended")
        #expect(desk.ledger.totalBytes == 130, "and keeps its bytes until answered")
        desk.answered(showing.ticket)
        #expect(desk.ledger.totalBytes == 40)
        #expect(desk.removeEndable(of: c).map(ObjectIdentifier.init) == [ObjectIdentifier(endable)])
        #expect(desk.ledger.totalBytes == 0)
    }

    /// Room that cannot be made in full is not made in part: a refused
    /// push ends nothing, even where some of the largest holder's pushes
    /// could be ended.
    @Test func roomNotMadeInFullIsNotMadeInPart() throws {
        let (small, large, other) = (Peer(), Peer(), Peer())
        let (a, b, c) = (ObjectIdentifier(small), ObjectIdentifier(large), ObjectIdentifier(other))
        var desk = Desk(limits: .init(pushesPerSender: 4, bytesPerSender: 120, totalBytes: 200))
        let waiting = try #require(Self.admitted(&desk, b, bytes: 90))
        desk.settled(waiting.ticket)
        let shown = try #require(Self.admitted(&desk, c, bytes: 80))
        desk.settled(shown.ticket)
        let endable = Delivery()
        let running = try #require(Self.admitted(&desk, b, bytes: 20))
        desk.attach(endable, to: running.ticket)
        // Ending b's 20 leaves 205 of 200: refused, and b's push runs on.
        guard case .failure = desk.admit(a, bytes: 35) else {
            Issue.record("admitted past the total")
            return
        }
        #expect(desk.ledger.totalBytes == 190)
        #expect(desk.removeEndable(of: b).map(ObjectIdentifier.init) == [ObjectIdentifier(endable)])
    }

    /// A delivery that settled as it started (no extension to wait for) is
    /// never attached: nothing is left to end.
    @Test func aDeliveryThatSettledAsItStartedIsNotKept() throws {
        let peer = Peer()
        var desk = Desk()
        let push = try #require(Self.admitted(&desk, ObjectIdentifier(peer), bytes: 5))
        desk.settled(push.ticket)
        desk.attach(Delivery(), to: push.ticket)
        #expect(desk.removeEndable(of: ObjectIdentifier(peer)).isEmpty)
        desk.answered(push.ticket)
        #expect(desk.ledger.totalBytes == 0)
        // A sender's own ceilings come first.
        let limited = Peer()
        var strict = Desk(limits: .init(pushesPerSender: 1, bytesPerSender: 100, totalBytes: 1_000))
        #expect(Self.admitted(&strict, ObjectIdentifier(limited), bytes: 1) != nil)
        guard case .failure(let refusal) = strict.admit(ObjectIdentifier(limited), bytes: 1) else {
            Issue.record("admitted past the sender's count")
            return
        }
        #expect(refusal.message.contains("1 pushes in flight"))
    }

    /// A sender's own ceilings by default: 8 pushes and 4 MiB of payload
    /// in flight, each refused with what to do; 32 MiB in all.
    @Test func aSendersCeilingsAreEightPushesAndFourMebibytes() throws {
        let (one, other) = (Peer(), Peer())
        let sender = ObjectIdentifier(one)
        var ledger = PushLedger()
        #expect(ledger.limits.totalBytes == 32 << 20)
        for _ in 0..<4 { ledger.charge(sender, bytes: 900_000) }
        #expect(ledger.refusal(sender, bytes: 900_055)?.message
            == "this connection's pushes in flight would hold 4500055 bytes of payload, over its limit of 4194304; wait for their answers")
        #expect(ledger.refusal(sender, bytes: 594_304) == nil)
        for _ in 0..<4 { ledger.charge(sender, bytes: 1) }
        #expect(ledger.refusal(sender, bytes: 1)?.message == "this connection has 8 pushes in flight, its limit; wait for their answers")
        #expect(ledger.refusal(ObjectIdentifier(other), bytes: 4 << 20) == nil, "another sender has its own")
    }
}
