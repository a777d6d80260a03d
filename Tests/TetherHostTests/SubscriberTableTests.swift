import Testing
import TetherIPC
@testable import TetherHost

/// Who hears each event, with connections as plain objects: no socket, no host.
@Suite struct SubscriberTableTests {
    final class Peer {}

    typealias Table = SubscriberTable<Peer>

    static func heard(_ table: Table, _ event: String, about: String? = nil, names: [ObjectIdentifier: String] = [:]) -> Set<ObjectIdentifier> {
        Set(table.listeners(of: event, about: about) { names[$0] }.map(ObjectIdentifier.init))
    }

    /// Only those that asked hear an event; a subscription answers all the
    /// connection now hears; a gone connection hears nothing.
    @Test func onlySubscribersHearAnEvent() throws {
        let (listener, quiet) = (Peer(), Peer())
        var table = Table()
        #expect(try table.subscribe(listener, to: [HostNotification.featureChanged]).get() == [HostNotification.featureChanged])
        #expect(try table.subscribe(listener, to: [HostNotification.extensionChanged]).get()
            == [HostNotification.extensionChanged, HostNotification.featureChanged])
        #expect(try table.subscribe(quiet, to: [HostNotification.storeChanged]).get() == [HostNotification.storeChanged])
        #expect(Self.heard(table, HostNotification.featureChanged) == [ObjectIdentifier(listener)])
        #expect(Self.heard(table, HostNotification.storeChanged) == [ObjectIdentifier(quiet)])
        #expect(!Self.heard(table, HostNotification.extensionChanged).contains(ObjectIdentifier(quiet)))
        table.remove(listener)
        #expect(Self.heard(table, HostNotification.storeChanged) == [ObjectIdentifier(quiet)], "only the one gone")
        #expect(Self.heard(table, HostNotification.featureChanged).isEmpty)
        #expect(Self.heard(table, HostNotification.extensionChanged).isEmpty)
    }

    /// An event the host has not is refused with the list, and nothing of
    /// that request is taken; a hello's unknown events are ignored.
    @Test func anUnknownEventIsRefusedWithTheListAndChangesNothing() throws {
        let peer = Peer()
        var table = Table()
        guard case .failure(let error) = table.subscribe(peer, to: [HostNotification.featureChanged, "everything"]) else {
            Issue.record("an unknown event was taken")
            return
        }
        #expect(error.code == RPCError.invalidParams("").code)
        #expect(error.message == "Invalid params: unknown event \"everything\"; events are "
            + "extension.changed, feature.changed, store.changed, notification.closed, notification.action")
        #expect(Self.heard(table, HostNotification.featureChanged).isEmpty)
        #expect(table.subscribe(peer, hello: ["everything", HostNotification.storeChanged]) == [HostNotification.storeChanged])
        #expect(Self.heard(table, HostNotification.storeChanged) == [ObjectIdentifier(peer)])
        #expect(try table.subscribe(peer, to: []).get() == [HostNotification.storeChanged])
    }

    /// Of an extension's change, the user's clients and that extension
    /// hear; no other extension does. Other events go to every subscriber.
    @Test func noExtensionHearsOfAnother() throws {
        let (user, first, second) = (Peer(), Peer(), Peer())
        let names = [ObjectIdentifier(first): "first", ObjectIdentifier(second): "second"]
        var table = Table()
        for peer in [user, first, second] {
            table.subscribe(peer, hello: [HostNotification.extensionChanged, HostNotification.featureChanged])
        }
        #expect(Self.heard(table, HostNotification.extensionChanged, about: "first", names: names)
            == [ObjectIdentifier(user), ObjectIdentifier(first)])
        #expect(Self.heard(table, HostNotification.extensionChanged, about: "third", names: names) == [ObjectIdentifier(user)])
        #expect(Self.heard(table, HostNotification.featureChanged, names: names).count == 3)
    }
}
