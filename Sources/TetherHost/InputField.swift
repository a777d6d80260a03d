import TetherIPC

/// What an engine knows of its input context's field: focus, purpose,
/// the client's capabilities, the text around the cursor (kept only while
/// focused, never for a password's or a PIN's), the marked text it showed.
/// Positions are in Unicode scalars, as IBus counts them (GLib's UTF-8
/// characters); so is the cap, which thus bounds bytes too (a "character"
/// of one letter and a million accents is a million scalars).
struct InputField {
    var focused = false
    /// IBus's input purpose (`ContentType`), 0 (free form) until told.
    private(set) var purpose: UInt32 = 0
    var capabilities: UInt32 = 0
    var marked = ""
    private var text: [Unicode.Scalar] = []
    private var cursor = 0
    private var anchor = 0
    private var hasText = false
    static let maximumTextBytes = 1 << 20

    /// The kind a keyboard is told of; nil when no keyboard may see the
    /// field (not focused, or a password's or a PIN's).
    var keyboardKind: FieldKind? {
        guard focused, case .field(let kind) = IBusKey.kind(purpose: purpose) else { return nil }
        return kind
    }

    /// Whether the keyboard has been told of this field.
    var tellsKeyboard: Bool { keyboardKind != nil }

    /// Whether deletions can go by the text (`DeleteSurroundingText`).
    var knowsSurroundingText: Bool { hasText && capabilities & IBusKey.surroundingTextCapability != 0 }

    /// The client's text around the cursor (positions in characters).
    mutating func surrounding(_ string: String, cursor: Int, anchor: Int) {
        // A field of megabytes (a whole document) is not walked: its text
        // is unknown, as where the client tells none.
        guard string.utf8.count <= Self.maximumTextBytes else { return forget() }
        // A secret field's text is never kept: it could be told once the
        // purpose changes (one context may serve several fields).
        guard case .field = IBusKey.kind(purpose: purpose) else { return forget() }
        // Only the part a keyboard may be given is kept.
        let characters = Array(string.unicodeScalars)
        let cap = KeyboardProtocol.contextCharacters
        let cursor = min(max(cursor, 0), characters.count), anchor = min(max(anchor, 0), characters.count)
        let start = max(0, min(cursor, anchor) - cap), end = min(characters.count, max(cursor, anchor) + cap)
        text = Array(characters[start..<end])
        self.cursor = cursor - start
        self.anchor = anchor - start
        hasText = true
    }

    /// A new purpose: what was told of the text belonged to the field as
    /// it was (one input context may serve several fields).
    mutating func setPurpose(_ purpose: UInt32) {
        if purpose != self.purpose { forget() }
        self.purpose = purpose
    }

    /// Drops what the field said of its text (focus left it).
    mutating func forget() {
        text = []
        cursor = 0
        anchor = 0
        hasText = false
    }

    /// The context a keyboard is given with a key.
    func document(_ kind: FieldKind) -> DocumentContext {
        guard hasText else { return DocumentContext(kind: kind) }
        let low = min(cursor, anchor), high = max(cursor, anchor)
        func string(_ scalars: ArraySlice<Unicode.Scalar>) -> String {
            var result = ""
            result.unicodeScalars.append(contentsOf: scalars)
            return result
        }
        return DocumentContext(kind: kind, before: string(text[..<low]), after: string(text[high...]),
                               selected: string(text[low..<high]))
    }
}
