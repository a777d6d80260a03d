import Testing
@testable import TetherHost

/// The host's table of its desktop notifications has a ceiling
/// (invariant 11): past it the oldest are forgotten, and closed ones do
/// not pile up in its order.
@Suite struct NotificationIdentitiesTests {
    @Test func aPayloadIDMapsToItsServerIDUntilClosed() {
        var identities = NotificationIdentities()
        identities.record(7, id: "order-42")
        identities.record(8, id: nil)
        #expect(identities.serverID(for: "order-42") == 7)
        #expect(identities.serverID(for: nil) == 0)
        #expect(identities.known(8) == .some(nil))
        #expect(identities.known(9) == nil, "another application's notification")
        identities.forget(7)
        #expect(identities.serverID(for: "order-42") == 0, "closed: the next push with its id is a new one")
        #expect(identities.known(7) == nil)
    }

    @Test func pastTheCeilingTheOldestAreForgotten() {
        var identities = NotificationIdentities()
        let maximum = UInt32(NotificationIdentities.maximum)
        for server in 1...(maximum + 100) { identities.record(server, id: "id-\(server)") }
        #expect(identities.payloadIDs.count == NotificationIdentities.maximum)
        #expect(identities.serverIDs.count == NotificationIdentities.maximum)
        #expect(identities.known(100) == nil)
        #expect(identities.known(101) == .some("id-101"))
        #expect(identities.serverID(for: "id-\(maximum + 100)") == maximum + 100)
    }

    @Test func closedOnesLeaveNothingBehind() {
        var identities = NotificationIdentities()
        for server in 1...UInt32(10 * NotificationIdentities.maximum) {
            identities.record(server, id: "id-\(server)")
            identities.forget(server)
        }
        #expect(identities.payloadIDs.isEmpty && identities.serverIDs.isEmpty)
        #expect(identities.orderCount <= 2 * NotificationIdentities.maximum + 1)
    }

    /// A server that gives an id again (restarted, counting from 1; or a
    /// stand-in answering every call with one id): the payload id it had
    /// no longer names it, or a later push with that id would replace
    /// another notification, and the table would grow with every new id.
    @Test func aServerIDGivenAgainTakesItsOldPayloadIDWithIt() {
        var identities = NotificationIdentities()
        identities.record(1, id: "order-1")
        identities.record(1, id: "order-2")
        #expect(identities.serverID(for: "order-1") == 0, "order-1 is no longer on the desktop")
        #expect(identities.serverID(for: "order-2") == 1)
        for push in 3...(10 * NotificationIdentities.maximum) { identities.record(1, id: "order-\(push)") }
        #expect(identities.serverIDs.count == 1 && identities.payloadIDs.count == 1, "\(identities.serverIDs.count)")
        identities.record(1, id: nil)
        #expect(identities.serverIDs.isEmpty)
    }
}
