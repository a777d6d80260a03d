import TetherJSON

/// The keyboard's messages: how a keyboard extension is an input method.
/// The host (IBus's engine) hands each key of the focused field to the
/// keyboard with the field's text around the cursor; the keyboard answers
/// whether it took the key and what it did to the text. Only the focused
/// field's keys and context ever reach a keyboard, never a password's.
package enum KeyboardProtocol {
    /// One key: `KeyPress` → `KeyAnswer`. Unanswered within
    /// `answerMilliseconds` of its arrival, the key goes to the
    /// application as if no keyboard were there, and a late answer is dropped.
    package static let key = MethodDescriptor<KeyPress, KeyAnswer>("keyboard.key", sender: .host(toRole: "keyboard"))
    /// A field took focus (with its kind) or lost it: the keyboard drops
    /// what it knew of the text.
    package static let focus = NotificationDescriptor<KeyboardFocus>("keyboard.focus", sender: .host(toRole: "keyboard"))
    /// How long a key waits for the keyboard's answer.
    package static let answerMilliseconds: UInt64 = 100
    /// The context each side of the cursor a keyboard is given, in characters.
    package static let contextCharacters = 300
}

/// What kind of text a field takes (IBus's content purpose, iOS's keyboard
/// type). Password and PIN fields have none: no keyboard sees them.
package enum FieldKind: String, Sendable, Equatable, CaseIterable {
    case text, number, phone, email, url, name, terminal
}

/// The focused field's text around the cursor, capped to
/// `KeyboardProtocol.contextCharacters` each side.
package struct DocumentContext: Sendable, Equatable {
    package var kind: FieldKind
    package var before: String
    package var after: String
    package var selected: String

    package init(kind: FieldKind = .text, before: String = "", after: String = "", selected: String = "") {
        self.kind = kind
        self.before = String(before.suffix(KeyboardProtocol.contextCharacters))
        self.after = String(after.prefix(KeyboardProtocol.contextCharacters))
        self.selected = String(selected.prefix(KeyboardProtocol.contextCharacters))
    }

    init(wire: JSONValue?) throws(RPCError) {
        guard let object = wire, case .object = object else { throw .invalidParams("\"document\" must be an object") }
        guard let kind = FieldKind(rawValue: object["kind"]?.stringValue ?? "") else {
            throw .invalidParams("\"kind\" must be one of \(FieldKind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        self.init(kind: kind, before: object["before"]?.stringValue ?? "", after: object["after"]?.stringValue ?? "",
                  selected: object["selected"]?.stringValue ?? "")
    }

    var wire: JSONValue {
        .object(["kind": .string(kind.rawValue), "before": .string(before), "after": .string(after),
                 "selected": .string(selected)])
    }
}

/// `keyboard.key`'s params: the key (X11 keysym, evdev code, modifier
/// bits as IBus gives them, and the text it types, if any) and the field.
package struct KeyPress: WireMessage, Equatable {
    package var keyval: UInt32
    package var keycode: UInt32
    package var modifiers: UInt32
    /// The character the key types, nil for a key that types none.
    package var text: String?
    package var document: DocumentContext

    package init(keyval: UInt32, keycode: UInt32, modifiers: UInt32, text: String?, document: DocumentContext) {
        self.keyval = keyval
        self.keycode = keycode
        self.modifiers = modifiers
        self.text = text
        self.document = document
    }

    package init(wire: JSONValue?) throws(RPCError) {
        func number(_ field: String) throws(RPCError) -> UInt32 {
            guard let value = wire?[field]?.uint64Value, let number = UInt32(exactly: value) else {
                throw .invalidParams("\"\(field)\" must be an unsigned 32-bit number")
            }
            return number
        }
        self.init(keyval: try number("keyval"), keycode: try number("keycode"), modifiers: try number("modifiers"),
                  text: wire?["text"]?.stringValue, document: try DocumentContext(wire: wire?["document"]))
    }

    package var wire: JSONValue {
        var object: [String: JSONValue] = ["keyval": .number(JSONNumber(keyval)), "keycode": .number(JSONNumber(keycode)),
                                           "modifiers": .number(JSONNumber(modifiers)), "document": document.wire]
        if let text { object["text"] = .string(text) }
        return .object(object)
    }
}

/// What a keyboard does to the focused field (iOS's text document proxy).
package enum TextEdit: Sendable, Equatable {
    case insert(String)
    /// Characters before the cursor.
    case deleteBackward(Int)
    /// The cursor moves by characters (negative: back).
    case adjust(Int)
    /// Marked (composing) text replaces the marked text there is.
    case mark(String)
    /// The marked text becomes ordinary text.
    case unmark

    /// What one answer may do: a key is a key, not a document.
    package static let maximumEdits = 64, maximumTextBytes = 4_096, maximumCount = 1_024

    init(wire: JSONValue) throws(RPCError) {
        func count(_ value: JSONValue, _ field: String, signed: Bool) throws(RPCError) -> Int {
            // Not abs(): the smallest integer has no magnitude in Int.
            guard let number = value.intValue, number <= Self.maximumCount, number >= (signed ? -Self.maximumCount : 0) else {
                throw .invalidParams("\"\(field)\" must be a\(signed ? "n" : " non-negative") integer within \(Self.maximumCount)")
            }
            return number
        }
        func text(_ value: String, _ field: String) throws(RPCError) -> String {
            // Text, not a terminal's commands: no control character but a
            // tab and a newline (the return key's), no escape sequence.
            guard !value.unicodeScalars.contains(where: Self.isRefusedControl) else {
                throw .invalidParams("\"\(field)\" holds a control character (only tab and newline are text)")
            }
            return value
        }
        if let value = wire["insert"]?.stringValue {
            self = .insert(try text(value, "insert"))
        } else if let value = wire["deleteBackward"] {
            self = .deleteBackward(try count(value, "deleteBackward", signed: false))
        } else if let value = wire["adjust"] {
            self = .adjust(try count(value, "adjust", signed: true))
        } else if let value = wire["mark"]?.stringValue {
            self = .mark(try text(value, "mark"))
        } else if wire["unmark"]?.boolValue == true {
            self = .unmark
        } else {
            throw .invalidParams("an edit must be one of insert, deleteBackward, adjust, mark, unmark")
        }
    }

    /// C0 (but tab and newline), DEL and C1.
    static func isRefusedControl(_ scalar: Unicode.Scalar) -> Bool {
        (scalar.value < 0x20 && scalar != "\t" && scalar != "\n") || (0x7F...0x9F).contains(scalar.value)
    }

    /// The keys the host sends the application for it (cursor moves, and
    /// deletions where the text is unknown): counted against one answer's
    /// `maximumCount`.
    var keyCount: Int {
        switch self {
        case .deleteBackward(let count): count
        case .adjust(let offset): offset.magnitude > Int.max.magnitude ? Int.max : Int(offset.magnitude)
        default: 0
        }
    }

    var wire: JSONValue {
        switch self {
        case .insert(let text): .object(["insert": .string(text)])
        case .deleteBackward(let count): .object(["deleteBackward": .number(JSONNumber(count))])
        case .adjust(let offset): .object(["adjust": .number(JSONNumber(offset))])
        case .mark(let text): .object(["mark": .string(text)])
        case .unmark: .object(["unmark": .bool(true)])
        }
    }
}

/// `keyboard.key`'s answer: whether the keyboard took the key (false: the
/// application gets it), and its edits, applied in order, all or none.
package struct KeyAnswer: WireMessage, Equatable {
    package var handled: Bool
    package var edits: [TextEdit]

    package init(handled: Bool, edits: [TextEdit] = []) {
        self.handled = handled
        self.edits = edits
    }

    package init(wire: JSONValue?) throws(RPCError) {
        guard let handled = wire?["handled"]?.boolValue else { throw .invalidParams("\"handled\" must be a boolean") }
        let list = wire?["edits"]
        guard list == nil || list?.arrayValue != nil else { throw .invalidParams("\"edits\" must be an array") }
        let items = list?.arrayValue ?? []
        guard items.count <= TextEdit.maximumEdits else {
            throw .invalidParams("\(items.count) edits; at most \(TextEdit.maximumEdits) for one key")
        }
        var edits: [TextEdit] = []
        var bytes = 0, keys = 0
        for item in items {
            let edit = try TextEdit(wire: item)
            // A key is a key: its answer moves the cursor or deletes at most
            // `maximumCount` in all, not a key storm (ibus-daemon gives up on
            // a key after 15 s, and the application would get it twice).
            keys += edit.keyCount
            guard keys <= TextEdit.maximumCount else {
                throw .invalidParams("the edits move or delete more than \(TextEdit.maximumCount) characters for one key")
            }
            if case .insert(let text) = edit { bytes += text.utf8.count }
            if case .mark(let text) = edit { bytes += text.utf8.count }
            guard bytes <= TextEdit.maximumTextBytes else {
                throw .invalidParams("the edits insert more than \(TextEdit.maximumTextBytes) bytes for one key")
            }
            edits.append(edit)
        }
        self.init(handled: handled, edits: edits)
    }

    package var wire: JSONValue {
        .object(["handled": .bool(handled), "edits": .array(edits.map(\.wire))])
    }
}

/// `keyboard.focus`'s params: a field took focus (its kind), or none has it.
package struct KeyboardFocus: WireMessage, Equatable {
    /// nil: the field lost focus.
    package var kind: FieldKind?

    package init(kind: FieldKind?) { self.kind = kind }

    package init(wire: JSONValue?) throws(RPCError) {
        guard let focused = wire?["focused"]?.boolValue else { throw .invalidParams("\"focused\" must be a boolean") }
        kind = focused ? FieldKind(rawValue: wire?["kind"]?.stringValue ?? "") ?? .text : nil
    }

    package var wire: JSONValue {
        guard let kind else { return .object(["focused": .bool(false)]) }
        return .object(["focused": .bool(true), "kind": .string(kind.rawValue)])
    }
}
