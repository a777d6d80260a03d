import Foundation
import Testing
@testable import TetherBus
import TetherLoop
import TetherTestSupport

/// The D-Bus client against a bus that misbehaves (`ScriptedBus`, in this
/// process): a flood, a hang-up with calls in flight, answers and calls no
/// reader can take apart. The loop keeps turning, every caller hears once,
/// and the connection ends once.
@Suite(.timed) struct BusHostilePeerTests {
    /// The peer's side on a thread of its own; a failure there ends the test.
    static func peer(_ bus: ScriptedBus, loop: EventLoop, _ finish: @escaping (String) -> Void,
                     _ body: @escaping @Sendable (ScriptedBus) throws -> Void) throws {
        nonisolated(unsafe) let finish = finish
        try DetachedThread.start {
            do {
                try bus.accept()
                try body(bus)
            } catch {
                loop.execute { finish("the scripted bus: \(error)") }
            }
        }
    }

    /// 1,000 signals arrive while the loop is busy: it takes at most
    /// `dispatchesPerTurn` a turn, so its other work (the service manager's
    /// watchdog ping, clients) runs between, not after the whole flood. A
    /// job that queues itself again each turn counts what came in each.
    @Test func aFloodOfSignalsLetsTheLoopTurn() async throws {
        let directory = try TemporaryDirectory()
        let bus = try ScriptedBus(in: directory.path)
        let count = 1_000
        let perTurn: String = try await onLoop { loop, finish in
            let client = try BusConnection(loop: loop, address: bus.address)
            // Touched on the loop's thread only.
            final class Tally: @unchecked Sendable { var seen = 0, atTurns: [Int] = [] }
            let tally = Tally()
            @Sendable func turn() {
                tally.atTurns.append(tally.seen)
                if tally.seen < count { loop.execute(turn) }
            }
            try client.subscribe("type='signal',interface='t.Flood'") { _ in
                tally.seen += 1
                if tally.seen == 1 { loop.execute(turn) }
                if tally.seen == count {
                    let marks = [1] + tally.atTurns + [count]
                    finish("\(zip(marks.dropFirst(), marks).map { $0 - $1 }.max() ?? -1)")
                }
            }
            try Self.peer(bus, loop: loop, finish) { bus in
                try bus.answerBusCalls(until: "AddMatch")
                // The whole flood is sent while the loop waits.
                let busy = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
                loop.execute { busy.signal(); release.wait() }
                busy.wait()
                bus.send((0..<count).flatMap { _ in bus.signal(path: "/", interface: "t.Flood", member: "Tick") })
                release.signal()
            }
        }
        let most = try #require(Int(perTurn), "\(perTurn)")
        #expect(most > 0 && most <= 2 * BusConnection.dispatchesPerTurn, "\(most) signals in one turn of the loop")
    }

    /// The bus hangs up with three calls in flight: each caller hears once,
    /// with a failure, and the connection's end is told once.
    @Test func aHangUpAnswersEveryCallInFlightOnce() async throws {
        let directory = try TemporaryDirectory()
        let bus = try ScriptedBus(in: directory.path)
        let outcome: String = try await onLoop { loop, finish in
            let client = try BusConnection(loop: loop, address: bus.address)
            var answers: [String] = [], closes = 0
            func check() {
                if answers.count == 3 && closes == 1 { finish(answers.sorted().joined(separator: ",")) }
            }
            client.onClose = { _ in closes += 1; check() }
            for index in 0..<3 {
                client.call(destination: "t.Peer", path: "/", interface: "t.Slow", member: "Slow\(index)") { result in
                    if case .failure = result { answers.append("failed\(index)") } else { answers.append("answered\(index)") }
                    check()
                }
            }
            try Self.peer(bus, loop: loop, finish) { bus in
                try bus.answerBusCalls(until: "Slow2")
                bus.hangUp()
            }
        }
        #expect(outcome == "failed0,failed1,failed2")
    }

    /// An answer nested deeper than any reader takes: its caller hears a
    /// failure, and the next call on the connection is answered.
    @Test func anAnswerNoReaderTakesIsOneFailureAndTheConnectionGoesOn() async throws {
        let directory = try TemporaryDirectory()
        let bus = try ScriptedBus(in: directory.path)
        let outcome: String = try await onLoop { loop, finish in
            let client = try BusConnection(loop: loop, address: bus.address)
            var heard: [String] = []
            client.call(destination: "t.Peer", path: "/", interface: "t.Deep", member: "Deep") { result in
                guard case .failure(let error) = result else { return finish("deep answered: \(result)") }
                heard.append("\(error)")
                client.call(destination: "t.Peer", path: "/", interface: "t.Deep", member: "Plain") { result in
                    let text: String? = if case .success(let answer) = result, case .string(let value) = answer.arguments.first {
                        value
                    } else { nil }
                    finish(heard.joined() + " | " + (text ?? "plain: \(result)"))
                }
            }
            try Self.peer(bus, loop: loop, finish) { bus in
                let deep = try bus.answerBusCalls(until: "Deep")
                bus.send(bus.reply(to: deep, signature: "v", body: Wire.nestedVariants(depth: 40, innermost: 7)))
                let plain = try bus.answerBusCalls(until: "Plain")
                bus.send(bus.reply(to: plain, signature: "s", body: Wire.body([.string("still here")])))
            }
        }
        #expect(outcome.hasPrefix("a message nests deeper than") && outcome.hasSuffix(" | still here"), "\(outcome)")
    }

    /// A call to an exported object whose arguments no reader takes is
    /// answered InvalidArgs, and its handler never sees it; one it can read
    /// is handled. Both come without a destination, as ibus-daemon's do.
    @Test func aCallNoReaderTakesIsAnsweredInvalidArgs() async throws {
        let directory = try TemporaryDirectory()
        let bus = try ScriptedBus(in: directory.path)
        let answers = Answers()
        let handled: String = try await onLoop { loop, finish in
            let client = try BusConnection(loop: loop, address: bus.address)
            // Touched on the loop's thread only.
            final class Handled: @unchecked Sendable { var members: [String] = [] }
            let handled = Handled()
            try client.export(path: "/engine") { call in
                handled.members.append(call.message.member ?? "?")
                call.reply([.string("ok")])
                return true
            }
            nonisolated(unsafe) let finish = finish
            try Self.peer(bus, loop: loop, finish) { bus in
                bus.send(bus.call(path: "/engine", interface: "t.Engine", member: "Deep", signature: "v",
                                  body: Wire.nestedVariants(depth: 40, innermost: 7)))
                answers.add(try bus.read())
                bus.send(bus.call(path: "/engine", interface: "t.Engine", member: "Plain"))
                answers.add(try bus.read())
                // Both answers read: what the handler saw is all it will see.
                loop.execute { finish(handled.members.joined(separator: ",")) }
            }
        }
        #expect(handled == "Plain")
        let replies = answers.all
        #expect(replies.count == 2 && replies[0].type == 3 && replies[0].fields[4] == "org.freedesktop.DBus.Error.InvalidArgs"
                && replies[1].type == 2, "\(replies.map { ($0.type, $0.fields) })")
    }
}

/// What the scripted bus read, for the test's thread.
final class Answers: @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [ScriptedBus.Message] = []
    func add(_ message: ScriptedBus.Message) { lock.withLock { messages.append(message) } }
    var all: [ScriptedBus.Message] { lock.withLock { messages } }
}
