/// Turns chunks of a child's output into whole lines, so each can carry the
/// extension's name. A partial line is held until its newline (or `flush`);
/// a runaway line is cut at `maximumLine` bytes.
struct LineSplitter {
    static let maximumLine = 64 * 1024
    private var pending: [UInt8] = []

    mutating func append(_ bytes: [UInt8]) -> [String] {
        var lines: [String] = []
        for byte in bytes {
            if byte == 0x0a {
                lines.append(String(decoding: pending, as: UTF8.self))
                pending.removeAll(keepingCapacity: true)
            } else {
                pending.append(byte)
                if pending.count >= Self.maximumLine {
                    lines.append(String(decoding: pending, as: UTF8.self))
                    pending.removeAll(keepingCapacity: true)
                }
            }
        }
        return lines
    }

    mutating func flush() -> String? {
        defer { pending.removeAll() }
        return pending.isEmpty ? nil : String(decoding: pending, as: UTF8.self)
    }
}
