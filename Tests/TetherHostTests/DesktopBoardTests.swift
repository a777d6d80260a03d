import Logging
import Testing
import TetherIPC
import TetherJSON
import TetherLoop
import TetherTestSupport
@testable import TetherHost

/// The desktop's part of a push without a notification server: each
/// answer says why nothing was shown, and nothing waits for a bus.
@Suite(.timed) struct DesktopBoardTests {
    func delivered(_ content: [String: JSONValue]) -> [DeliveredPush] {
        [DeliveredPush(extensionName: "notes", content: content, modified: false, timedOut: false)]
    }

    func answer(_ board: DesktopBoard, _ deliveries: [DeliveredPush]) -> DesktopDisplay? {
        var display: DesktopDisplay?
        board.show(deliveries, pushedBy: "notes", hiddenBy: { _ in false }) { display = $0 }
        return display
    }

    @Test func offOrWithoutABusEachPushIsAnsweredAtOnceWithWhy() throws {
        let loop = try EventLoop()
        let off = DesktopBoard(loop: loop, logger: Logger(label: "test"), enabled: false, groupPath: "/g/notes-app")
        off.start()
        #expect(off.status.state == .off)
        #expect(answer(off, delivered([DesktopNotification.Field.title: "hi"]))?.reason == "off (tether host --no-desktop-notifications)")
        // On, but before (or without) a session bus.
        let unstarted = DesktopBoard(loop: loop, logger: Logger(label: "test"), enabled: true, groupPath: "/g/notes-app")
        #expect(unstarted.status.state == .noSessionBus)
        #expect(answer(unstarted, delivered([DesktopNotification.Field.title: "hi"]))?.reason == "no session bus")
        unstarted.close()
        off.close()
    }

    /// A server replaced (another took the name) while a push was on its
    /// way answers it after the change: that number is the old server's,
    /// so the next push with the same payload id is a new notification
    /// on the new server, not a replacement of its notification 5.
    @Test func anAnswerFromTheServerThatWasReplacedIsNotTheNewOnes() async throws {
        let directory = try TemporaryDirectory()
        let bus = try ScriptedBus(in: directory.path)
        let push = delivered([DesktopNotification.Field.title: "Packed", DesktopNotification.Field.id: "order-1"])
        // Longer than the server's own steps (10 s each): a stall names its step.
        let outcome: String = try await onLoop(timeoutMilliseconds: 15_000) { loop, finish in
            let board = DesktopBoard(loop: loop, logger: Logger(label: "test"), enabled: true, groupPath: "/g/notes-app")
            let poll = LoopTimer(loop: loop)
            var answers: [String] = []
            let done: (String) -> Void = { result in
                let outcome = "\(answers) \(result)"
                poll.close()
                board.close()
                finish(outcome)
            }
            func show() {
                board.show(push, pushedBy: nil, hiddenBy: { _ in false }) { display in
                    answers.append(display.notification.map { "shown \($0)" } ?? display.reason ?? "?")
                }
            }
            // The first push once the server is known.
            poll.start(afterMilliseconds: 5, repeatMilliseconds: 5) {
                guard board.status.state == .shown else { return }
                poll.stop()
                show()
            }
            board.start(bus: .success(bus.address))
            // Run on the loop (loop.execute) from the server's thread.
            nonisolated(unsafe) let showAgain = show, report = done
            try DesktopNotifierTests.serve(bus, loop: loop, done) { bus in
                let first = try bus.answerBusCalls(until: "Notify")
                bus.send(bus.signal(path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged",
                                    sender: "org.freedesktop.DBus", signature: "sss",
                                    body: Wire.body([.string(DesktopNotifier.name), .string(":1.3"), .string(":1.9")])))
                bus.send(bus.reply(to: first, signature: "u", body: Wire.body([.uint32(5)])))
                let asked = try bus.answerBusCalls(until: "GetServerInformation")
                bus.send(bus.reply(to: asked, signature: "ssss",
                                   body: Wire.body(["second", "tether", "2.0", "1.2"].map { .string($0) })))
                let capabilities = try bus.answerBusCalls(until: "GetCapabilities")
                bus.send(bus.reply(to: capabilities, signature: "as", body: Wire.body([.strings(["body"])])))
                loop.execute { showAgain() }
                let second = try bus.answerBusCalls(until: "Notify")
                let replacing = Self.replacesID(of: second.body)
                bus.send(bus.reply(to: second, signature: "u", body: Wire.body([.uint32(1)])))
                loop.execute { report("then replacing \(replacing.map(String.init) ?? "?")") }
                _ = try? bus.read(timeout: 10)
            }
        }
        // The second push's own answer may come before the report or not.
        #expect(outcome.hasPrefix("[\"shown 5\"") && outcome.hasSuffix("] then replacing 0"), "\(outcome)")
    }

    /// `Notify`'s second argument (`replaces_id`), after its first (the
    /// application's name: a length, the bytes, a NUL, padding to 4).
    static func replacesID(of body: [UInt8]) -> UInt32? {
        func word(at offset: Int) -> UInt32? {
            guard offset >= 0, offset + 4 <= body.count else { return nil }
            return (0..<4).reduce(UInt32(0)) { $0 | UInt32(body[offset + $1]) << (8 * $1) }
        }
        guard let length = word(at: 0), length < 1_024 else { return nil }
        return word(at: (4 + Int(length) + 1 + 3) / 4 * 4)
    }
}
