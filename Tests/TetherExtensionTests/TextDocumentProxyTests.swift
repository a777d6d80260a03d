import Testing
@testable import TetherExtension
import TetherIPC

/// The proxy a keyboard edits a field through: what it says of the text
/// follows its own edits, which go back in order.
@Suite struct TextDocumentProxyTests {
    @Test func editsAreRecordedAndTheContextFollowsThem() {
        let proxy = TextDocumentProxy(DocumentContext(kind: .email, before: "hi ;rec", after: " end", selected: ""))
        #expect(proxy.fieldKind == "email")
        for _ in 0..<4 { proxy.deleteBackward() }
        proxy.insertText("recording on")
        #expect(proxy.documentContextBeforeInput == "hi recording on")
        proxy.adjustTextPosition(byCharacterOffset: -2)
        #expect(proxy.documentContextBeforeInput == "hi recording ")
        #expect(proxy.documentContextAfterInput == "on end")
        proxy.setMarkedText("ka")
        proxy.deleteBackward()
        proxy.unmarkText()
        #expect(proxy.documentContextBeforeInput == "hi recording k")
        #expect(proxy.edits == [.deleteBackward(1), .deleteBackward(1), .deleteBackward(1), .deleteBackward(1),
                                .insert("recording on"), .adjust(-2), .mark("ka"), .deleteBackward(1), .unmark])
    }

    @Test func anEmptyFieldTellsNoContext() {
        let proxy = TextDocumentProxy(DocumentContext())
        #expect(proxy.documentContextBeforeInput == nil && proxy.documentContextAfterInput == nil && proxy.selectedText == nil)
        proxy.deleteBackward()
        proxy.adjustTextPosition(byCharacterOffset: 0)
        #expect(proxy.edits == [.deleteBackward(1)], "a move by nothing is no edit")
    }
}
