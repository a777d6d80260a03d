import Foundation
import Testing
import TetherBus
import TetherIPC
import TetherLoop
import TetherTestSupport
@testable import TetherHost

/// One IBus engine against an ibus-daemon of the test's own (`ScriptedBus`,
/// in this process) and a keyboard that answers when the test says: a
/// password field's keys never reach the keyboard, even one already on its
/// way, and what the application tells is taken without trust.
@Suite(.timed) struct InputEngineTests {
    /// The keyboard extension's side, on the loop.
    final class Keyboard: KeyboardRelay {
        var sent: [KeyPress] = []
        var focused: [String] = []
        var waiting: [(KeyAnswer?) -> Void] = []
        /// Whether it answers each key at once (not handled).
        let answersAtOnce: Bool
        init(answersAtOnce: Bool) { self.answersAtOnce = answersAtOnce }
        func send(_ press: KeyPress, to name: String, done: @escaping (KeyAnswer?) -> Void) -> () -> Void {
            sent.append(press)
            if answersAtOnce { done(KeyAnswer(handled: false)) } else { waiting.append(done) }
            return {}
        }
        func focus(_ kind: FieldKind?, of name: String) {
            focused.append(kind.map { "\($0)" } ?? "none")
            // Its answer to the key it holds comes now, late: "typed".
            if kind == nil { for done in waiting { done(KeyAnswer(handled: true, edits: [.insert("typed")])) } }
        }
    }

    static let path = "/org/freedesktop/IBus/Engine/1"
    static let engine = IBusSerialization.engineInterface

    /// An engine for `keyboard` on a connection to `bus`, and the daemon's
    /// side (`daemon`, on a thread) whose summary ends the test, with the
    /// keyboard's (`Keyboard.sent`'s texts, `focused`).
    static func run(answersAtOnce: Bool = false, _ daemon: @escaping @Sendable (ScriptedBus) throws -> String) async throws
        -> String {
        let directory = try TemporaryDirectory()
        let bus = try ScriptedBus(in: directory.path)
        return try await onLoop { loop, finish in
            let client = try BusConnection(loop: loop, address: bus.address)
            let keyboard = Keyboard(answersAtOnce: answersAtOnce)
            let engine = try InputEngine(path: Self.path, keyboard: "kb", bus: client, relay: keyboard)
            nonisolated(unsafe) let done: (String) -> Void = { summary in
                let typed = keyboard.sent.map { press in
                    let document = press.document
                    let around = document.before.isEmpty && document.selected.isEmpty ? ""
                        : " (\(document.before)[\(document.selected)]\(document.after))"
                    return (press.text ?? "?") + around
                }.joined(separator: ",")
                engine.close()
                client.close()
                finish("\(summary) | keyboard got [\(typed)], focus \(keyboard.focused.joined(separator: ","))")
            }
            try DetachedThread.start {
                let summary: String
                do {
                    try bus.accept()
                    summary = try daemon(bus)
                } catch {
                    summary = "the scripted daemon: \(error)"
                }
                loop.execute { done(summary) }
            }
        }
    }

    /// A key press's answer: "true", "false", or the error's name.
    static func answer(_ message: ScriptedBus.Message) -> String {
        message.type == 3 ? message.fields[4] ?? "error" : Wire.u32(message.body, 0) == 1 ? "true" : "false"
    }

    static func key(_ character: Character) -> [UInt8] {
        Wire.body([.uint32(character.unicodeScalars.first.map(\.value) ?? 0), .uint32(30), .uint32(0)])
    }

    /// A key waits for the keyboard when the field becomes a password's:
    /// it goes back to the application (not handled), the keyboard's late
    /// answer types nothing, and the next key never reaches the keyboard.
    @Test func aPasswordFieldsKeysNeverReachTheKeyboard() async throws {
        let summary = try await Self.run { bus in
            _ = try bus.ask(path: Self.path, interface: Self.engine, member: "FocusIn")
            bus.send(bus.call(path: Self.path, interface: Self.engine, member: "ProcessKeyEvent", signature: "uuu",
                              body: Self.key("a")))
            let password = Wire.body([.string(Self.engine), .string("ContentType"), .variant("(uu)", .structure([.uint32(8), .uint32(0)]))])
            let set = try bus.ask(path: Self.path, interface: "org.freedesktop.DBus.Properties", member: "Set",
                                  signature: "ssv", body: password)
            let waiting = set.before.filter { $0.type == 2 || $0.type == 3 }.map(Self.answer)
            let next = try bus.ask(path: Self.path, interface: Self.engine, member: "ProcessKeyEvent", signature: "uuu",
                                   body: Self.key("b"))
            let typed = (set.before + next.before).filter { $0.member == "CommitText" }.count
            return "waiting key \(waiting), next key \(Self.answer(next.answer)), \(typed) committed"
        }
        #expect(summary == "waiting key [\"false\"], next key false, 0 committed | keyboard got [a], focus text,none")
    }

    /// Arguments of the wrong type are refused; a cursor past the text (the
    /// application's word) is taken as its end, and the keyboard is told
    /// the text around it.
    @Test func whatTheApplicationTellsIsTakenWithoutTrust() async throws {
        let summary = try await Self.run(answersAtOnce: true) { bus in
            let wrong = try bus.ask(path: Self.path, interface: Self.engine, member: "ProcessKeyEvent", signature: "s",
                                    body: Wire.body([.string("x")]))
            _ = try bus.ask(path: Self.path, interface: Self.engine, member: "FocusIn")
            let text = Wire.body([Wire.ibusText("héllo wörld 🎉"), .uint32(4_000_000_000), .uint32(3)])
            let told = try bus.ask(path: Self.path, interface: Self.engine, member: "SetSurroundingText", signature: "vuu",
                                   body: text)
            let key = try bus.ask(path: Self.path, interface: Self.engine, member: "ProcessKeyEvent", signature: "uuu",
                                  body: Self.key("c"))
            return "\(Self.answer(wrong.answer)), surrounding \(told.answer.type == 2 ? "taken" : "refused"), "
                + "key \(Self.answer(key.answer))"
        }
        #expect(summary == "org.freedesktop.DBus.Error.InvalidArgs, surrounding taken, key false"
                + " | keyboard got [c (hél[lo wörld 🎉])], focus text,none", "\(summary)")
    }

    /// The field loses focus while a key waits for the keyboard: the key
    /// goes back to the application, and the keyboard's late answer (told
    /// as focus leaves) types nothing into whatever has focus next.
    @Test func aKeyWaitingWhenFocusLeavesGoesToTheApplication() async throws {
        let summary = try await Self.run { bus in
            _ = try bus.ask(path: Self.path, interface: Self.engine, member: "FocusIn")
            bus.send(bus.call(path: Self.path, interface: Self.engine, member: "ProcessKeyEvent", signature: "uuu",
                              body: Self.key("a")))
            let out = try bus.ask(path: Self.path, interface: Self.engine, member: "FocusOut")
            let waiting = out.before.filter { $0.type == 2 || $0.type == 3 }.map(Self.answer)
            // A round trip after: anything the late answer caused has come.
            let after = try bus.ask(path: Self.path, interface: "org.freedesktop.DBus.Properties", member: "Get",
                                    signature: "ss", body: Wire.body([.string(Self.engine), .string("FocusId")]))
            let typed = (out.before + after.before).filter { $0.member == "CommitText" }.count
            return "waiting key \(waiting), \(typed) committed"
        }
        #expect(summary == "waiting key [\"false\"], 0 committed | keyboard got [a], focus text,none")
    }

    /// The daemon destroys the engine: it answers, and the object is gone
    /// from the bus (a call after it is not taken).
    @Test func aDestroyedEngineTakesNoMoreCalls() async throws {
        let summary = try await Self.run { bus in
            let destroyed = try bus.ask(path: Self.path, interface: IBusSerialization.serviceInterface, member: "Destroy")
            let after = try bus.ask(path: Self.path, interface: Self.engine, member: "ProcessKeyEvent", signature: "uuu",
                                    body: Self.key("z"))
            return "destroy \(destroyed.answer.type == 2 ? "answered" : "refused"), then \(Self.answer(after.answer))"
        }
        #expect(summary.hasPrefix("destroy answered, then org.freedesktop.DBus.Error.Unknown"), "\(summary)")
        #expect(summary.hasSuffix("keyboard got [], focus "), "\(summary)")
    }
}
