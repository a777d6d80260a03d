import Foundation
import Testing
import TetherBus
import TetherLoop
import TetherTestSupport

/// The D-Bus client on a real bus (a private dbus-daemon): calls and their
/// answers, an object exported and answered later, signals, values of every
/// shape IBus and the desktop use, a peer that never answers, a bus that goes.
@Suite(.timed) struct BusConnectionTests {
    static let nested: [BusValue] = [
        .string("IBusText"), .properties([("a", .uint32(7))]), .string("héllo"),
        .variant(.structure([.string("IBusAttrList"), .properties([]), .array(element: "v", [])])),
        .array(element: "(si)", [.structure([.string("x"), .int32(-3)])]),
        .byte(200), .boolean(true), .int64(-1 << 40), .uint64(1 << 63), .double(2.5), .objectPath("/a/b"),
        .int16(-2), .uint16(65_000), .signature("a{sv}"),
    ]

    @Test func aCallIsAnsweredLaterWithEveryShapeOfValue() async throws {
        let directory = try TemporaryDirectory()
        let bus = try PrivateBus(in: directory.path)
        defer { bus.stopAlways() }
        let echoed: [BusValue] = try await onLoop { loop, finish in
            let server = try BusConnection(loop: loop, address: bus.address)
            let client = try BusConnection(loop: loop, address: bus.address)
            var held: [BusIncomingCall] = []
            try server.export(path: "/echo") { call in
                guard call.message.member == "Echo" else { return false }
                // Answered on a later turn: the call is kept until then.
                held.append(call)
                let timer = LoopTimer(loop: loop)
                timer.start(afterMilliseconds: 1) {
                    timer.close()
                    held.removeFirst().reply(call.message.arguments)
                }
                return true
            }
            // The server's unique name once Hello is answered: a call to a
            // name the bus does not know is an error answer first.
            client.call(destination: "org.nobody.Here", path: "/", interface: nil, member: "Nothing") { result in
                guard case .failure(let error) = result, error.name == "org.freedesktop.DBus.Error.ServiceUnknown" else {
                    return finish([.string("expected ServiceUnknown, got \(result)")])
                }
                guard let name = server.uniqueName else { return finish([.string("no unique name")]) }
                client.call(destination: name, path: "/echo", interface: "test.Echo", member: "Echo", Self.nested) { answer in
                    finish((try? answer.get().arguments) ?? [.string("failed: \(answer)")])
                }
            }
        }
        #expect(echoed == Self.nested)
    }

    @Test func signalsReachTheirSubscriberAndUnknownMethodsAreRefused() async throws {
        let directory = try TemporaryDirectory()
        let bus = try PrivateBus(in: directory.path)
        defer { bus.stopAlways() }
        let seen: String = try await onLoop { loop, finish in
            let server = try BusConnection(loop: loop, address: bus.address)
            let client = try BusConnection(loop: loop, address: bus.address)
            try server.export(path: "/object") { _ in false }
            try client.subscribe("type='signal',interface='test.Signals'") { message in
                finish("\(message.member ?? "") \(message.arguments.first?.stringValue ?? "")")
            }
            // Once the client's match is in (its call answered after it),
            // the server signals.
            client.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                        member: "GetId") { _ in
                guard let name = server.uniqueName else { return finish("no unique name") }
                client.call(destination: name, path: "/object", interface: "test.X", member: "Missing") { result in
                    guard case .failure(let error) = result, error.name == "org.freedesktop.DBus.Error.UnknownMethod" else {
                        return finish("expected UnknownMethod, got \(result)")
                    }
                    do {
                        try server.emit(path: "/object", interface: "test.Signals", member: "Changed", [.string("now")])
                    } catch {
                        finish("emit failed: \(error)")
                    }
                }
            }
        }
        #expect(seen == "Changed now")
    }

    @Test func aPeerThatNeverAnswersTimesOutAndADroppedCallIsAnswered() async throws {
        let directory = try TemporaryDirectory()
        let bus = try PrivateBus(in: directory.path)
        defer { bus.stopAlways() }
        let outcome: String = try await onLoop { loop, finish in
            let server = try BusConnection(loop: loop, address: bus.address)
            let client = try BusConnection(loop: loop, address: bus.address)
            var kept: BusIncomingCall?
            try server.export(path: "/slow") { call in
                if call.message.member == "Never" { kept = call }
                return true  // "Drop" is taken and dropped: answered with an error
            }
            client.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                        member: "GetId") { _ in
                guard let name = server.uniqueName else { return finish("no unique name") }
                client.call(destination: name, path: "/slow", interface: "t.S", member: "Drop") { dropped in
                    guard case .failure(let error) = dropped, error.name == "org.freedesktop.DBus.Error.Failed" else {
                        return finish("dropped: \(dropped)")
                    }
                    let start = MonotonicClock.nanoseconds()
                    client.call(destination: name, path: "/slow", interface: "t.S", member: "Never", timeoutMilliseconds: 200) {
                        result in
                        let waited = (MonotonicClock.nanoseconds() - start) / 1_000_000
                        guard case .failure = result, kept != nil, waited >= 150 else { return finish("never: \(result) \(waited)") }
                        finish("ok")
                    }
                }
            }
        }
        #expect(outcome == "ok")
    }

    @Test func aBusThatGoesAwayEndsTheConnectionOnce() async throws {
        let directory = try TemporaryDirectory()
        let bus = try PrivateBus(in: directory.path)
        defer { bus.stopAlways() }
        let reason: String = try await onLoop { loop, finish in
            let client = try BusConnection(loop: loop, address: bus.address)
            var told = 0
            client.onClose = { error in
                told += 1
                finish("\(told) \(client.isOpen)")
            }
            client.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                        member: "GetId") { _ in
                try? bus.stop()
            }
        }
        #expect(reason == "1 false")
    }

    @Test func anAutolaunchAddressIsNeverRun() async throws {
        let refused: String = try await onLoop { loop, finish in
            do {
                _ = try BusConnection(loop: loop, address: "autolaunch:")
                finish("connected")
            } catch {
                finish("refused")
            }
        }
        #expect(refused == "refused")
    }
}
