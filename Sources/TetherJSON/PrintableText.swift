/// Text from outside (an extension's output, a manifest's value, a peer's
/// name) made safe to show on one line of a terminal or a text log: what
/// could end the line, move the cursor, start an escape sequence or reorder
/// what follows is shown as an escape instead. Tab stays.
///
/// Escaped: C0 controls (`\n`, `\r`, `\u{1b}`, ...), DEL, C1 controls
/// (U+0080–U+009F: U+009B starts a sequence on some terminals), the
/// bidirectional controls (U+061C, U+200E, U+200F, U+202A–U+202E,
/// U+2066–U+2069) and the line and paragraph separators (U+2028, U+2029).
package enum PrintableText {
    package static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case _ where needsEscape(scalar): out += "\\u{\(String(scalar.value, radix: 16))}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    package static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09: false
        case 0x00..<0x20, 0x7F..<0xA0: true
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0x2028, 0x2029: true
        default: false
        }
    }
}
