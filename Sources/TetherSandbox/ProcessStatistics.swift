#if canImport(Glibc)
import Glibc
#endif

/// What a process costs, from procfs: resident memory and CPU time (what
/// `tether metrics` shows for the host and each extension).
package struct ProcessStatistics: Sendable, Equatable {
    package var residentBytes: Int64
    /// User and system time, in seconds.
    package var cpuSeconds: Double

    package init(residentBytes: Int64, cpuSeconds: Double) {
        self.residentBytes = residentBytes
        self.cpuSeconds = cpuSeconds
    }

    /// Process `pid`'s, from `/proc/PID/stat`; nil once it is gone.
    package static func of(pid: Int32) -> ProcessStatistics? {
        guard pid > 0, let text = CgroupFile.read("/proc/\(pid)/stat", limit: 4_096) else { return nil }
        return parse(stat: text)
    }

    /// The fields after the command's closing parenthesis (the command may
    /// hold spaces and parentheses): state is field 3, utime 14, stime 15,
    /// rss (pages) 24, as proc(5) numbers them.
    static func parse(stat text: String) -> ProcessStatistics? {
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 21, let user = UInt64(fields[11]), let system = UInt64(fields[12]),
              let pages = Int64(fields[21]) else { return nil }
        let ticks = max(1, sysconf(Int32(_SC_CLK_TCK)))
        let pageSize = Int64(max(1, sysconf(Int32(_SC_PAGESIZE))))
        let (resident, overflow) = max(0, pages).multipliedReportingOverflow(by: pageSize)
        return ProcessStatistics(residentBytes: overflow ? Int64.max : resident,
                                 cpuSeconds: Double(user &+ system) / Double(ticks))
    }

    /// Whether process `pid` leaves `signal` to its default action (no
    /// handler, not ignored: `SigCgt` and `SigIgn` in `/proc/PID/status`);
    /// nil once it is gone.
    package static func defaults(pid: Int32, signal: Int32) -> Bool? {
        guard pid > 0, signal > 0, signal <= 64, let text = CgroupFile.read("/proc/\(pid)/status", limit: 8_192) else {
            return nil
        }
        // Bytes, not Characters, and no further than the two it needs: a
        // host stopping 3,000 extensions asks 3,000 times.
        var caught: UInt64?, ignored: UInt64?
        for line in text.utf8.split(separator: UInt8(ascii: "\n")) {
            if line.starts(with: "SigCgt:".utf8) { caught = hexadecimal(line.dropFirst(7)) }
            if line.starts(with: "SigIgn:".utf8) { ignored = hexadecimal(line.dropFirst(7)) }
            if caught != nil, ignored != nil { break }
        }
        guard let caught, let ignored else { return nil }
        return (caught | ignored) & (1 << UInt64(signal - 1)) == 0
    }

    /// A mask's 16 hex digits after blanks, or nil.
    private static func hexadecimal(_ bytes: Substring.UTF8View.SubSequence) -> UInt64? {
        var value: UInt64 = 0, digits = 0
        for byte in bytes {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"):
                guard digits == 0 else { return nil }
                continue
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            guard digits < 16 else { return nil }
            value = value << 4 | UInt64(digit)
            digits += 1
        }
        return digits > 0 ? value : nil
    }

    /// The calling process's open descriptors (the listing's own left out).
    package static func openDescriptors() -> Int? {
        let directory = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { return nil }
        defer { close(directory) }
        // The directory's descriptor and the listing's duplicate are counted too.
        return (DirectoryEntries.read(directory)?.count).map { max(0, $0 - 2) }
    }
}
