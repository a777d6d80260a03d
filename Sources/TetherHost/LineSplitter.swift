/// Turns chunks of a child's output into whole lines, so each can carry the
/// extension's name. A partial line is held until its newline (or `flush`);
/// a runaway line is cut at `maximumLine` bytes. Each line is offered to an
/// `admit` check before a String is made of it: a refused line costs only
/// the scan for its newline, and is counted in `dropped`.
struct LineSplitter {
    static let maximumLine = 64 * 1024
    private var pending: [UInt8] = []
    /// Lines refused by `admit` since the caller last reset this.
    var dropped = 0

    mutating func append(_ bytes: [UInt8], admit: (Int) -> Bool = { _ in true }) -> [String] {
        var lines: [String] = []
        var start = 0
        var index = 0
        while index < bytes.count {
            let isEnd = bytes[index] == 0x0a
            let length = pending.count + index - start
            if isEnd || length + 1 >= Self.maximumLine {
                let end = isEnd ? index : index + 1
                let count = pending.count + end - start
                if admit(count) {
                    pending += bytes[start..<end]
                    lines.append(String(decoding: pending, as: UTF8.self))
                } else {
                    dropped += 1
                }
                pending.removeAll(keepingCapacity: true)
                start = index + 1
            }
            index += 1
        }
        if start < bytes.count { pending += bytes[start...] }
        return lines
    }

    mutating func flush() -> String? {
        defer { pending.removeAll() }
        return pending.isEmpty ? nil : String(decoding: pending, as: UTF8.self)
    }
}
