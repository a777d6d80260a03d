import Testing
import TetherIPC
import TetherJSON

/// The keyboard's messages: what crosses the wire, read back the same,
/// and what a keyboard may not answer.
@Suite struct KeyboardMessagesTests {
    @Test func aKeyAndItsAnswerReadBackAsWritten() throws {
        let press = KeyPress(keyval: 0x61, keycode: 30, modifiers: 1, text: "a",
                             document: DocumentContext(kind: .email, before: "me@", after: "", selected: "x"))
        #expect(try KeyPress(wire: press.wire) == press)
        let answer = KeyAnswer(handled: true, edits: [.insert("é"), .deleteBackward(2), .adjust(-3), .mark("ka"), .unmark])
        #expect(try KeyAnswer(wire: JSONCodec.parse(Array(JSONCodec.serialize(answer.wire)))) == answer)
        #expect(try KeyboardFocus(wire: KeyboardFocus(kind: .url).wire) == KeyboardFocus(kind: .url))
        #expect(try KeyboardFocus(wire: KeyboardFocus(kind: nil).wire) == KeyboardFocus(kind: nil))
    }

    @Test func theContextIsCappedWhereverItIsMade() {
        let long = String(repeating: "ü", count: 1_000)
        let document = DocumentContext(before: long, after: long, selected: long)
        #expect(document.before.count == KeyboardProtocol.contextCharacters)
        #expect(document.after.count == KeyboardProtocol.contextCharacters)
        #expect(document.selected.count == KeyboardProtocol.contextCharacters)
    }

    @Test func anAnswerBeyondWhatOneKeyMayDoIsRefused() throws {
        func refused(_ json: String) -> Bool {
            do {
                _ = try KeyAnswer(wire: try JSONCodec.parse(Array(json.utf8)))
                return false
            } catch {
                return true
            }
        }
        let many = Array(repeating: #"{"insert":"z"}"#, count: TextEdit.maximumEdits + 1).joined(separator: ",")
        #expect(refused(#"{"handled":true,"edits":[\#(many)]}"#), "more edits than a key may make")
        let big = String(repeating: "z", count: TextEdit.maximumTextBytes + 1)
        #expect(refused(#"{"handled":true,"edits":[{"insert":"\#(big)"}]}"#), "more text than a key may type")
        #expect(refused(#"{"handled":true,"edits":[{"deleteBackward":-1}]}"#))
        #expect(refused(#"{"handled":true,"edits":[{"adjust":100000}]}"#))
        #expect(refused(#"{"handled":true,"edits":[{"explode":true}]}"#))
        // The smallest integer has no magnitude: refused, not a trap.
        #expect(refused(#"{"handled":true,"edits":[{"adjust":-9223372036854775808}]}"#))
        #expect(refused(#"{"handled":true,"edits":[{"deleteBackward":-9223372036854775808}]}"#))
        // 64 moves of 1,024 would be 131,072 keys sent for one.
        let storm = Array(repeating: #"{"adjust":1024}"#, count: TextEdit.maximumEdits).joined(separator: ",")
        #expect(refused(#"{"handled":true,"edits":[\#(storm)]}"#), "more keys than one key may send")
        #expect(!refused(#"{"handled":true,"edits":[{"adjust":-1024}]}"#))
        // Text, not a terminal's commands.
        #expect(refused(#"{"handled":true,"edits":[{"insert":"echo pwned\r"}]}"#))
        #expect(refused(#"{"handled":true,"edits":[{"insert":"\u001b[2J"}]}"#))
        #expect(refused(#"{"handled":true,"edits":[{"mark":"a\u0000b"}]}"#))
        #expect(!refused(#"{"handled":true,"edits":[{"insert":"line\n\tnext"}]}"#))
        #expect(refused(#"{"edits":[]}"#), "no handled")
        #expect(!refused(#"{"handled":false}"#))
    }
}
