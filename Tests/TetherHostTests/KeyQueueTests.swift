import Testing
import TetherIPC
@testable import TetherHost

/// The keys of one input context, as events and actions: no bus, no
/// keyboard, no clock but the one the test gives.
@Suite struct KeyQueueTests {
    static func press(_ text: String) -> KeyPress {
        KeyPress(keyval: UInt32(text.unicodeScalars.first?.value ?? 0), keycode: 0, modifiers: 0, text: text,
                 document: DocumentContext())
    }

    @Test func keysGoToTheKeyboardOneAtATimeAndAreAnsweredInOrder() {
        var queue = KeyQueue()
        let (a, first) = queue.arrived(Self.press("a"), forKeyboard: true, now: 0)
        #expect(first == [.send(a, Self.press("a")), .wake(100)])
        let (b, second) = queue.arrived(Self.press("b"), forKeyboard: true, now: 10)
        #expect(second == [.wake(100)], "b waits for a's answer")
        let answer = KeyAnswer(handled: true, edits: [.insert("A")])
        #expect(queue.answered(a, answer, now: 20) == [.answer(a, answer), .send(b, Self.press("b")), .wake(110)])
        #expect(queue.answered(b, KeyAnswer(handled: false), now: 30) == [.answer(b, KeyAnswer(handled: false)), .wake(nil)])
    }

    @Test func aKeyPastItsDeadlineGoesToTheApplicationAndItsLateAnswerIsDropped() {
        var queue = KeyQueue()
        let (a, _) = queue.arrived(Self.press("a"), forKeyboard: true, now: 0)
        let (b, _) = queue.arrived(Self.press("b"), forKeyboard: true, now: 50)
        // a's time ran out: unhandled, and b goes to the keyboard with its own time left.
        #expect(queue.tick(now: 100) == [.answer(a, KeyAnswer(handled: false)), .send(b, Self.press("b")), .wake(150)])
        // a's answer comes late: nothing, never a second answer of a.
        #expect(queue.answered(a, KeyAnswer(handled: true, edits: [.insert("A")]), now: 120) == [])
        // b answered after its deadline, before the timer fired: unhandled, its edits dropped.
        #expect(queue.answered(b, KeyAnswer(handled: true, edits: [.insert("B")]), now: 151)
                == [.answer(b, KeyAnswer(handled: false)), .wake(nil)])
    }

    @Test func keysTheKeyboardNeverSeesAreAnsweredInTheirTurn() {
        var queue = KeyQueue()
        let (a, _) = queue.arrived(Self.press("a"), forKeyboard: true, now: 0)
        let (release, waiting) = queue.arrived(Self.press("a"), forKeyboard: false, now: 5)
        #expect(waiting == [.wake(100)], "a release waits behind the press it follows")
        #expect(queue.answered(a, KeyAnswer(handled: true), now: 6)
                == [.answer(a, KeyAnswer(handled: true)), .answer(release, KeyAnswer(handled: false)), .wake(nil)])
    }

    @Test func aFailedKeyboardOrAFocusLostAnswersEveryKeyUnhandledInOrder() {
        var queue = KeyQueue()
        let (a, _) = queue.arrived(Self.press("a"), forKeyboard: true, now: 0)
        #expect(queue.answered(a, nil, now: 1) == [.answer(a, KeyAnswer(handled: false)), .wake(nil)])
        let (b, _) = queue.arrived(Self.press("b"), forKeyboard: true, now: 2)
        let (c, _) = queue.arrived(Self.press("c"), forKeyboard: true, now: 3)
        #expect(queue.drain() == [.answer(b, KeyAnswer(handled: false)), .answer(c, KeyAnswer(handled: false)), .wake(nil)])
        #expect(queue.answered(b, KeyAnswer(handled: true), now: 4) == [], "drained keys are answered once")
    }

    @Test func aQueueAtItsCeilingGivesEveryWaitingKeyToTheApplication() {
        var queue = KeyQueue()
        var serials: [UInt64] = []
        for index in 0..<KeyQueue.maximumWaiting {
            serials.append(queue.arrived(Self.press("x"), forKeyboard: true, now: UInt64(index) / 10).0)
        }
        let (next, actions) = queue.arrived(Self.press("y"), forKeyboard: true, now: 30)
        let answered = actions.compactMap { action -> UInt64? in if case .answer(let serial, _) = action { serial } else { nil } }
        #expect(answered == serials, "every waiting key, in order")
        #expect(actions.contains(.send(next, Self.press("y"))))
        #expect(queue.waiting.count == 1)
    }
}

/// What an engine keeps of its field.
@Suite struct InputFieldTests {
    @Test func passwordAndPinFieldsHaveNoKindAKeyboardMaySee() {
        var field = InputField()
        #expect(field.keyboardKind == nil, "not focused")
        field.focused = true
        #expect(field.keyboardKind == .text)
        for (purpose, kind) in [(2 as UInt32, FieldKind.number), (3, .number), (4, .phone), (5, .url), (6, .email),
                                (7, .name), (10, .terminal), (99, .text)] {
            field.setPurpose(purpose)
            #expect(field.keyboardKind == kind, "purpose \(purpose)")
        }
        for secret: UInt32 in [8, 9] {
            field.setPurpose(secret)
            #expect(field.keyboardKind == nil, "purpose \(secret) is a password's or a PIN's")
        }
    }

    /// One input context may serve several fields (Qt's does): a
    /// password's text is never kept, and what a field told is dropped
    /// when the purpose changes, so no later key carries it.
    @Test func aSecretFieldsTextIsNeverKeptNorToldAfterItsPurposeChanges() {
        var field = InputField()
        field.focused = true
        field.capabilities = IBusKey.surroundingTextCapability
        for secret: UInt32 in [8, 9] {
            field.setPurpose(secret)
            field.surrounding("hunter2", cursor: 7, anchor: 7)
            field.setPurpose(0)
            #expect(field.document(.text) == DocumentContext(kind: .text), "purpose \(secret)")
        }
        field.surrounding("hello", cursor: 5, anchor: 5)
        #expect(field.document(.text).before == "hello")
        field.setPurpose(8)
        field.setPurpose(0)
        #expect(field.document(.text) == DocumentContext(kind: .text), "told before the field became a password's")
    }

    /// The cap counts Unicode scalars, as IBus's positions do: one
    /// "character" of a letter and thousands of accents is no way past it.
    @Test func theContextCapBoundsItsBytes() {
        var field = InputField()
        field.focused = true
        field.capabilities = IBusKey.surroundingTextCapability
        let heavy = "e" + String(repeating: "\u{301}", count: 20_000)
        field.surrounding(heavy + heavy, cursor: 40_002, anchor: 40_002)
        let document = field.document(.text)
        #expect(document.before.unicodeScalars.count == KeyboardProtocol.contextCharacters)
        #expect(document.before.utf8.count <= 4 * KeyboardProtocol.contextCharacters)
    }

    @Test func theContextIsCappedEachSideAndForgottenAtFocusOut() {
        var field = InputField()
        field.focused = true
        field.capabilities = IBusKey.surroundingTextCapability
        let text = String(repeating: "a", count: 1_000) + "SEL" + String(repeating: "b", count: 1_000)
        field.surrounding(text, cursor: 1_003, anchor: 1_000)
        let document = field.document(.text)
        #expect(document.before == String(repeating: "a", count: 300))
        #expect(document.selected == "SEL")
        #expect(document.after == String(repeating: "b", count: 300))
        #expect(field.knowsSurroundingText)
        field.forget()
        #expect(field.document(.text) == DocumentContext(kind: .text))
        #expect(!field.knowsSurroundingText)
        // A document of megabytes is not walked: its text is unknown.
        field.surrounding(String(repeating: "x", count: InputField.maximumTextBytes + 1), cursor: 5, anchor: 5)
        #expect(!field.knowsSurroundingText)
    }

    @Test func keysymsTypeTheirCharacterAndControlKeysNone() {
        #expect(IBusKey.text(0x61) == "a")
        #expect(IBusKey.text(0xe9) == "é")
        #expect(IBusKey.text(0x0100_20ac) == "€")
        #expect(IBusKey.text(IBusKey.backSpace) == nil)
        #expect(IBusKey.text(0xff0d) == nil, "Return")
        #expect(IBusKey.text(0x0100_0007) == nil, "a control character")
        #expect(IBusKey.text(0x0100_d800) == nil, "a surrogate")
    }

    @Test func runsOfDeletionsAreOne() {
        #expect(InputEngine.coalesced([.deleteBackward(1), .deleteBackward(1), .insert("x"), .deleteBackward(2),
                                       .deleteBackward(1)])
                == [.deleteBackward(2), .insert("x"), .deleteBackward(3)])
    }
}
