/// Number and text formatting for people, without Foundation's
/// `String(format:)`; none of it traps, whatever the value.
package enum TextFormat {
    /// `value` with exactly `digits` decimals (0–6), rounded half away from
    /// zero; a value too large for that (or not finite) in its shortest form.
    package static func fixed(_ value: Double, _ digits: Int) -> String {
        let digits = max(0, min(digits, 6))
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = (value * scale).rounded()
        guard scaled.isFinite, scaled.magnitude < 9e15, let units = Int64(exactly: scaled) else { return "\(value)" }
        let sign = units < 0 ? "-" : ""
        let magnitude = units.magnitude
        let whole = magnitude / UInt64(scale)
        guard digits > 0 else { return sign + String(whole) }
        let fraction = String(magnitude % UInt64(scale))
        return sign + String(whole) + "." + String(repeating: "0", count: digits - fraction.count) + fraction
    }

    /// `text` right-aligned in `width` columns.
    package static func padded(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }
}
