/// Text from outside (a payload's title, a widget's entry) made safe for
/// where markup is read: the desktop notification spec's body markup, and
/// the Pango markup waybar reads. `&`, `<` and `>`, and the quotes (for
/// attribute values), become entities, so the text is shown as written and
/// can never be read as markup.
package enum MarkupText {
    package static func escaped(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}
