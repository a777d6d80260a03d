import Foundation
import Testing
import TetherIPC
import TetherLoop
import TetherTestSupport
@testable import TetherHost

/// The host's notification client against a notification server that
/// misbehaves (`ScriptedBus` is both the bus and the server, in this
/// process): signals forged by another peer, answers of the wrong shape,
/// and a server that stops answering while pushes keep coming.
@Suite(.timed) struct DesktopNotifierTests {
    /// The peer's side on a thread of its own: the bus's handshake, the
    /// server's name and capabilities, then `body`; a failure ends the test.
    static func serve(_ bus: ScriptedBus, loop: EventLoop, _ finish: @escaping (String) -> Void,
                      information: [String] = ["scripted", "tether", "1.0", "1.2"],
                      _ body: @escaping @Sendable (ScriptedBus) throws -> Void) throws {
        nonisolated(unsafe) let finish = finish
        try DetachedThread.start {
            do {
                try bus.accept()
                let asked = try bus.answerBusCalls(until: "GetServerInformation")
                bus.send(bus.reply(to: asked, signature: String(repeating: "s", count: information.count),
                                   body: Wire.body(information.map { .string($0) })))
                if information.count == 4 {
                    let capabilities = try bus.answerBusCalls(until: "GetCapabilities")
                    bus.send(bus.reply(to: capabilities, signature: "as", body: Wire.body([.strings(["body", "actions"])])))
                }
                try body(bus)
            } catch {
                loop.execute { finish("the scripted server: \(error)") }
            }
        }
    }

    static let push = DesktopNotification(title: "Build finished", body: "all green")

    /// A notifier on `bus` for one test on the loop: `body` gets it once the
    /// server is known (`shown`) or when its status is `until`; the test's
    /// end closes it.
    static func withNotifier(on bus: ScriptedBus, loop: EventLoop, _ finish: @escaping (String) -> Void,
                             until state: DesktopNotificationsStatus.State = .shown,
                             onSignal: @escaping (DesktopNotifier.Signal, @escaping (String) -> Void) -> Void = { _, _ in },
                             _ body: @escaping (DesktopNotifier, DesktopNotificationsStatus, @escaping (String) -> Void) -> Void)
        -> (String) -> Void {
        final class Kept { var notifier: DesktopNotifier? }
        let kept = Kept()
        let done: (String) -> Void = { result in
            kept.notifier?.close()
            kept.notifier = nil
            finish(result)
        }
        var started = false
        kept.notifier = DesktopNotifier(loop: loop, address: bus.address, onStatus: { status in
            guard status.state == state, !started, let notifier = kept.notifier else { return }
            started = true
            body(notifier, status, done)
        }, onSignal: { onSignal($0, done) })
        return done
    }

    /// Signals from a peer that is not the server, or of the wrong shape,
    /// are not the server's: only its own action reaches the host.
    @Test func onlyTheServersOwnSignalsCount() async throws {
        let directory = try TemporaryDirectory()
        let bus = try ScriptedBus(in: directory.path)
        let first: String = try await onLoop { loop, finish in
            let done = Self.withNotifier(on: bus, loop: loop, finish, onSignal: { signal, done in
                if case .action(let id, let key) = signal { done("\(id) \(key)") } else { done("\(signal)") }
            }) { _, _, _ in }
            try Self.serve(bus, loop: loop, done) { bus in
                let path = DesktopNotifier.path, interface = DesktopNotifier.name
                // Forged by another client of the bus, then malformed, then the server's own.
                bus.send(bus.signal(path: path, interface: interface, member: "ActionInvoked", sender: ":1.9",
                                    signature: "us", body: Wire.body([.uint32(5), .string("forged")]))
                         + bus.signal(path: path, interface: interface, member: "ActionInvoked", sender: ":1.3",
                                      signature: "s", body: Wire.body([.string("no id")]))
                         + bus.signal(path: path, interface: interface, member: "ActionInvoked", sender: ":1.3",
                                      signature: "us", body: Wire.body([.uint32(6), .string("open")])))
            }
        }
        #expect(first == "6 open")
    }

    /// A server that says less than its name, vendor, version and spec is
    /// no server; one that answers a push without an id has not shown it.
    @Test func answersOfTheWrongShapeShowNothing() async throws {
        let directory = try TemporaryDirectory()
        let bus = try ScriptedBus(in: directory.path)
        let status: String = try await onLoop { loop, finish in
            let done = Self.withNotifier(on: bus, loop: loop, finish, until: .noServer) { _, status, done in
                done(status.reason ?? "")
            }
            try Self.serve(bus, loop: loop, done, information: ["scripted", "tether", "1.0"]) { _ in }
        }
        #expect(status == "an unexpected answer")

        let other = try TemporaryDirectory()
        let server = try ScriptedBus(in: other.path)
        let refusal: String = try await onLoop { loop, finish in
            let done = Self.withNotifier(on: server, loop: loop, finish) { notifier, _, done in
                notifier.show(Self.push, appName: "notes", replacing: 0) { result in
                    if case .failure(let refusal) = result { done(refusal.reason) } else { done("shown: \(result)") }
                }
            }
            try Self.serve(server, loop: loop, done) { bus in
                let notify = try bus.answerBusCalls(until: "Notify")
                bus.send(bus.reply(to: notify, signature: "s", body: Wire.body([.string("not an id")])))
            }
        }
        #expect(refusal == "the notification server answered no id")
    }

    /// A server that stops answering: each push is answered "not shown" at
    /// the host's own deadline, but its call still waits in the bus's queue
    /// (the host's memory), so it counts against the limit until the server
    /// answers: the next push is refused at once, and one after the late
    /// answers is sent and shown.
    @Test(.waits) func unansweredCallsCountUntilTheServerAnswers() async throws {
        let directory = try TemporaryDirectory()
        let bus = try ScriptedBus(in: directory.path)
        let limit = DesktopNotifier.maximumPending
        let refused = DispatchSemaphore(value: 0)
        let outcome: String = try await onLoop(timeoutMilliseconds: 30_000) { loop, finish in
            var refusal = "none"
            let done = Self.withNotifier(on: bus, loop: loop, finish, onSignal: { _, done in
                // After the late answers (the server's signal follows them).
                Self.notifier?.show(Self.push, appName: "notes", replacing: 0) { result in
                    done("\(refusal) | then \(result)")
                }
            }) { notifier, _, done in
                Self.notifier = notifier
                var timedOut = 0
                for _ in 0..<limit {
                    notifier.show(Self.push, appName: "notes", replacing: 0) { result in
                        guard case .failure(let why) = result, why.reason.contains("did not answer") else {
                            return done("answered: \(result)")
                        }
                        timedOut += 1
                        guard timedOut == limit else { return }
                        // Every call timed out, none answered: all still held.
                        notifier.show(Self.push, appName: "notes", replacing: 0) { result in
                            if case .failure(let why) = result { refusal = why.reason }
                            refused.signal()
                        }
                    }
                }
            }
            try Self.serve(bus, loop: loop, done) { bus in
                var calls: [ScriptedBus.Message] = []
                while calls.count < limit { calls.append(try bus.answerBusCalls(until: "Notify")) }
                guard refused.wait(timeout: .now() + 10) == .success else { throw TestTimeout(what: "the push past the limit") }
                bus.send(calls.enumerated().flatMap { index, call in
                    bus.reply(to: call, signature: "u", body: Wire.body([.uint32(UInt32(index + 1))]))
                } + bus.signal(path: DesktopNotifier.path, interface: DesktopNotifier.name, member: "NotificationClosed",
                               signature: "uu", body: Wire.body([.uint32(1), .uint32(2)])))
                let next = try bus.answerBusCalls(until: "Notify")
                bus.send(bus.reply(to: next, signature: "u", body: Wire.body([.uint32(99)])))
            }
        }
        Self.notifier = nil
        #expect(outcome == "\(limit) notifications wait for the server's answer, the limit | then success(99)", "\(outcome)")
    }

    /// The server leaves the bus (its name loses its owner) and another
    /// takes the name: the first is no server from then, and the second is
    /// asked who it is before anything is shown.
    @Test func aServerThatLeavesAndOneThatComesAreSeen() async throws {
        let directory = try TemporaryDirectory()
        let bus = try ScriptedBus(in: directory.path)
        let states: String = try await onLoop { loop, finish in
            var seen: [String] = []
            final class Kept { var notifier: DesktopNotifier? }
            let kept = Kept()
            kept.notifier = DesktopNotifier(loop: loop, address: bus.address, onStatus: { status in
                seen.append("\(status.state)" + (status.server.map { " \($0)" } ?? ""))
                if seen.count == 6 {
                    kept.notifier?.close()
                    kept.notifier = nil
                    finish(seen.joined(separator: ", "))
                }
            }, onSignal: { signal in
                // Each change of owner: the ids the host knew name nothing now.
                if case .serverGone = signal { seen.append("gone") }
            })
            try Self.serve(bus, loop: loop, finish) { bus in
                func owner(_ old: String, _ new: String) -> [UInt8] {
                    bus.signal(path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged",
                               sender: "org.freedesktop.DBus", signature: "sss",
                               body: Wire.body([.string(DesktopNotifier.name), .string(old), .string(new)]))
                }
                bus.send(owner(":1.3", ""))
                bus.send(owner("", ":1.4"))
                let asked = try bus.answerBusCalls(until: "GetServerInformation")
                bus.send(bus.reply(to: asked, signature: "ssss",
                                   body: Wire.body(["second", "tether", "2.0", "1.2"].map { .string($0) })))
                let capabilities = try bus.answerBusCalls(until: "GetCapabilities")
                bus.send(bus.reply(to: capabilities, signature: "as", body: Wire.body([.strings(["body"])])))
                _ = try? bus.read(timeout: 10)  // held open until the notifier goes
            }
        }
        #expect(states == "connecting, shown scripted, gone, noServer, gone, shown second", "\(states)")
    }

    /// The bus hangs up with a push waiting for the server's answer: the push
    /// is answered once, as not shown, and the notifier connects again and
    /// serves the next one (a session bus restarted at the same address).
    @Test func aBusThatHangsUpIsFoundAgain() async throws {
        let directory = try TemporaryDirectory()
        let bus = try ScriptedBus(in: directory.path)
        let outcome: String = try await onLoop { loop, finish in
            var answers: [String] = []
            var shown = 0
            final class Kept { var notifier: DesktopNotifier? }
            let kept = Kept()
            kept.notifier = DesktopNotifier(loop: loop, address: bus.address, onStatus: { status in
                guard status.state == .shown, let notifier = kept.notifier else { return }
                shown += 1
                notifier.show(Self.push, appName: "notes", replacing: 0) { result in
                    switch result {
                    case .success(let id): answers.append("shown \(id)")
                    case .failure(let refusal): answers.append(refusal.reason)
                    }
                    guard answers.count == 3 else { return }
                    kept.notifier?.close()
                    kept.notifier = nil
                    finish(answers.joined(separator: " | "))
                }
            }, onSignal: { signal in
                // The bus closed: the ids its server gave name nothing now.
                if case .serverGone = signal { answers.append("gone") }
            })
            try Self.serve(bus, loop: loop, finish) { bus in
                _ = try bus.answerBusCalls(until: "Notify")
                bus.hangUp()
                // The notifier's next connection: served in full.
                try bus.accept()
                let asked = try bus.answerBusCalls(until: "GetServerInformation")
                bus.send(bus.reply(to: asked, signature: "ssss",
                                   body: Wire.body(["scripted", "tether", "1.0", "1.2"].map { .string($0) })))
                let capabilities = try bus.answerBusCalls(until: "GetCapabilities")
                bus.send(bus.reply(to: capabilities, signature: "as", body: Wire.body([.strings(["body"])])))
                let notify = try bus.answerBusCalls(until: "Notify")
                bus.send(bus.reply(to: notify, signature: "u", body: Wire.body([.uint32(12)])))
                _ = try? bus.read(timeout: 10)
            }
        }
        #expect(outcome.hasSuffix(" | gone | shown 12") && !outcome.hasPrefix("shown"), "\(outcome)")
    }

    /// The notifier the last test's closures reach (one such test runs).
    nonisolated(unsafe) static var notifier: DesktopNotifier?
}
