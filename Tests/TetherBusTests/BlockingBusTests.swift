import Foundation
import Testing
import TetherBus
import TetherLoop
import TetherTestSupport

/// The blocking connection (the host's start, `doctor`, the keyring) against
/// a bus of the test's own that behaves as a daemon does in one way that
/// matters here: a signal reaches only a client whose match it saw first.
@Suite(.timed) struct BlockingBusTests {
    static let rule = "type='signal',interface='t.Manager',member='JobRemoved'"

    /// The daemon's side: the call, then `signals` (job numbers) if the
    /// client's match came before it, then the answer (job 7).
    static func daemon(_ bus: ScriptedBus, signals: [UInt32], answerFirst: Bool = false) throws {
        try bus.accept()
        var matched = false
        var call: ScriptedBus.Message
        repeat {
            call = try bus.read()
            if call.member == "AddMatch" { matched = true }
            if call.destination == "org.freedesktop.DBus" { bus.send(bus.reply(to: call)) }
        } while call.member != "Start"
        let answer = bus.reply(to: call, signature: "u", body: Wire.body([.uint32(7)]))
        let removed = matched ? signals.flatMap { job in
            bus.signal(path: "/", interface: "t.Manager", member: "JobRemoved", signature: "us",
                       body: Wire.body([.uint32(job), .string(job == 7 ? "done" : "other")]))
        } : []
        bus.send(answerFirst ? answer + removed : removed + answer)
        // Held open until the client goes.
        _ = try? bus.read(timeout: 10)
    }

    static func start(_ bus: ScriptedBus, timeoutMilliseconds: UInt64 = 5_000) -> String {
        do {
            let client = try BlockingBus(address: bus.address, timeoutMilliseconds: timeoutMilliseconds)
            let (answer, signal) = try client.call(destination: "t.Manager", path: "/", interface: "t.Manager", member: "Start",
                                                   thenAwait: rule, until: { answer, signal in
                                                       signal.arguments.first == answer.first
                                                   }, timeoutMilliseconds: timeoutMilliseconds)
            return "\(answer.first?.uint32Value ?? 0) \(signal.arguments.last?.stringValue ?? "?")"
        } catch {
            return "\(error)"
        }
    }

    /// The job's signal comes before the call's answer (as systemd may send
    /// it), after another job's: it is the one taken. The match is made
    /// before the call; made after, a daemon would not have sent it.
    @Test(arguments: [false, true]) func theAnswersSignalIsTakenWhicheverComesFirst(_ answerFirst: Bool) async throws {
        let directory = try TemporaryDirectory()
        let bus = try ScriptedBus(in: directory.path)
        try DetachedThread.start { try? Self.daemon(bus, signals: [6, 7], answerFirst: answerFirst) }
        let outcome = try await offThePool { Self.start(bus) }
        #expect(outcome == "7 done")
    }

    /// No signal for the job: the wait ends at its bound, saying so.
    @Test func aSignalThatNeverComesEndsTheWaitInTime() async throws {
        let directory = try TemporaryDirectory()
        let bus = try ScriptedBus(in: directory.path)
        try DetachedThread.start { try? Self.daemon(bus, signals: [6]) }
        let started = MonotonicClock.nanoseconds()
        // The same bound covers the handshake: generous enough for a loaded machine.
        let outcome = try await offThePool { Self.start(bus, timeoutMilliseconds: 1_500) }
        let waited = (MonotonicClock.nanoseconds() - started) / 1_000_000
        #expect(outcome == "Start: no answer's signal within 1500 ms")
        #expect(waited >= 1_400 && waited < 8_000, "waited \(waited) ms")
    }

    /// The bus hangs up before answering: the call fails, at once.
    @Test func aBusThatHangsUpFailsTheCall() async throws {
        let directory = try TemporaryDirectory()
        let bus = try ScriptedBus(in: directory.path)
        try DetachedThread.start {
            guard (try? bus.accept()) != nil, (try? bus.answerBusCalls(until: "Start")) != nil else { return }
            bus.hangUp()
        }
        let started = MonotonicClock.nanoseconds()
        let outcome = try await offThePool { Self.start(bus) }
        #expect(!outcome.hasPrefix("7"), "\(outcome)")
        #expect((MonotonicClock.nanoseconds() - started) / 1_000_000 < 4_000)
    }

    /// A bus that takes the connection and never answers its handshake (a
    /// daemon stopped with SIGSTOP): the connection fails at the caller's
    /// bound, not at sd-bus's 90 s.
    @Test func aBusThatNeverAnswersTheHandshakeFailsInTime() async throws {
        let directory = try TemporaryDirectory()
        let bus = try ScriptedBus(in: directory.path)  // listening; nothing accepts
        let started = MonotonicClock.nanoseconds()
        let outcome = try await offThePool { Self.start(bus, timeoutMilliseconds: 300) }
        let waited = (MonotonicClock.nanoseconds() - started) / 1_000_000
        #expect(outcome == "the bus did not finish its handshake within 300 ms")
        #expect(waited < 5_000, "waited \(waited) ms")
    }
}
