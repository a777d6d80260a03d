import TetherIPC

/// The focused field, as a keyboard sees it while it handles one key
/// (iOS's `UITextDocumentProxy`): the text around the cursor (a few hundred
/// characters each side at most) and the edits the keyboard makes, which
/// the host applies to the field when the key's handling returns, in
/// order, all of them or, past the key's deadline, none. What the proxy
/// says of the text follows the edits made so far. One is made for each
/// key, on the extension's actor, and used there.
public final class TextDocumentProxy {
    private var before: String
    private var after: String
    private var selected: String
    private var marked = ""
    private(set) var edits: [TextEdit] = []

    /// The kind of text the field takes: "text", "number", "phone",
    /// "email", "url", "name" or "terminal" (iOS's keyboard type). Password
    /// and PIN fields never reach a keyboard.
    public let fieldKind: String

    init(_ document: DocumentContext) {
        before = document.before
        after = document.after
        selected = document.selected
        fieldKind = document.kind.rawValue
    }

    /// The text before the cursor (or the selection); nil where the
    /// application tells none.
    public var documentContextBeforeInput: String? { before.isEmpty ? nil : before }
    /// The text after the cursor (or the selection); nil where it tells none.
    public var documentContextAfterInput: String? { after.isEmpty ? nil : after }
    /// The selected text, nil when nothing is selected.
    public var selectedText: String? { selected.isEmpty ? nil : selected }

    /// Inserts `text` at the cursor, replacing the selection or the marked text.
    public func insertText(_ text: String) {
        marked = ""
        selected = ""
        before += text
        edits.append(.insert(text))
    }

    /// Deletes the character before the cursor (from the marked text first).
    public func deleteBackward() {
        if !marked.isEmpty {
            marked.removeLast()
        } else if !before.isEmpty {
            before.removeLast()
        }
        edits.append(.deleteBackward(1))
    }

    /// Moves the cursor by `offset` characters (negative: back).
    public func adjustTextPosition(byCharacterOffset offset: Int) {
        guard offset != 0 else { return }
        if offset < 0 {
            let moved = min(-offset, before.count)
            after = String(before.suffix(moved)) + after
            before.removeLast(moved)
        } else {
            let moved = min(offset, after.count)
            before += after.prefix(moved)
            after.removeFirst(moved)
        }
        edits.append(.adjust(offset))
    }

    /// Shows `text` as marked (composing) text at the cursor, replacing the
    /// marked text there was; "" removes it.
    public func setMarkedText(_ text: String) {
        marked = text
        edits.append(.mark(text))
    }

    /// Makes the marked text ordinary text, where it stands.
    public func unmarkText() {
        guard !marked.isEmpty else { return }
        before += marked
        marked = ""
        edits.append(.unmark)
    }
}
