/// Input quoted for an error message that repeats it: between single
/// quotes, what is not printable ASCII escaped (a name may hold control
/// characters, or bytes that were not UTF-8), and at most 64 characters of
/// it, then how long it was: a refused 128 KiB name made a 128 KiB line.
package func quotedInput(_ text: String) -> String {
    let limit = 64
    var shown = ""
    var count = 0
    for scalar in text.unicodeScalars {
        count += 1
        guard count <= limit else { continue }
        shown += scalar.isASCII && scalar.value >= 0x20 && scalar.value < 0x7f
            ? String(scalar) : scalar.escaped(asASCII: true)
    }
    return count <= limit ? "'\(shown)'" : "'\(shown)…' (\(count) characters)"
}
