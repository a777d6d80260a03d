import TetherLoop
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Who holds a lock. A Tether holder writes this into the lock file right
/// after acquiring it; for a foreign holder (util-linux flock(1), Darwin
/// O_EXLOCK) only the pid is known, from the kernel's lock table.
public struct HolderInfo: Sendable, Equatable {
    /// The holding process.
    public var pid: Int32
    /// ISO 8601, UTC; nil for foreign holders.
    public var since: String?
    /// What the holder says it holds ("host", "feature recording"); nil for foreign holders.
    public var label: String?

    package init(pid: Int32, since: String?, label: String?) {
        self.pid = pid
        self.since = since
        self.label = label
    }

    /// The lock file's content: `key=value` lines, cheap to parse in a probe.
    var serialized: [UInt8] {
        var text = "pid=\(pid)\n"
        if let since { text += "since=\(since)\n" }
        if let label { text += "label=\(label)\n" }
        return Array(text.utf8)
    }

    /// What a released record is blanked with (over its first bytes): pid 0
    /// names no holder, whatever the old record's other lines say.
    static let blank = Array("pid=0\n".utf8)

    /// Parses lock-file content; nil when it is empty, torn or not ours.
    init?(parsing bytes: [UInt8]) {
        var pid: Int32?
        var since: String?
        var label: String?
        for line in bytes.split(separator: 0x0a) {
            guard let equals = line.firstIndex(of: 0x3d) else { continue }
            let key = String(decoding: line[line.startIndex..<equals], as: UTF8.self)
            let value = String(decoding: line[(equals + 1)...], as: UTF8.self)
            switch key {
            case "pid": pid = Int32(value)
            case "since": since = value
            case "label": label = value
            default: continue
            }
        }
        guard let pid, pid > 0 else { return nil }
        self.init(pid: pid, since: since, label: label)
    }

    /// The current time as ISO 8601 UTC with milliseconds.
    static func now() -> String { WallClock.iso8601() }
}
