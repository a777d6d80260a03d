import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// Reads and writes of cgroupfs and procfs files: small, whole, one system
/// call each way (the kernel answers these in one read).
enum CgroupFile {
    /// The file's text (at most `limit` bytes), or nil.
    static func read(_ path: String, limit: Int = 16_384) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        // Grown as needed: most are a line or two, mountinfo and a busy
        // cgroup.procs much more.
        var buffer = [UInt8](repeating: 0, count: min(limit, 4_096))
        var total = 0
        while total < limit {
            if total == buffer.count { buffer += [UInt8](repeating: 0, count: min(buffer.count, limit - total)) }
            let room = buffer.count - total
            let got = buffer.withUnsafeMutableBytes { bytes in
                bytes.baseAddress.map { Glibc.read(fd, $0 + total, room) } ?? 0
            }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { break }
            total += got
        }
        return String(decoding: buffer[0..<total], as: UTF8.self)
    }

    static func write(_ path: String, _ text: String) throws(Errno) {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Errno(rawValue: errno) }
        defer { close(fd) }
        try write(fd: fd, text)
    }

    static func write(fd: Int32, _ text: String) throws(Errno) {
        var bytes = Array(text.utf8)
        let written = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw written < 0 ? Errno(rawValue: errno) : .ioError }
    }

    /// `KEY VALUE` lines (cgroup.events, memory.events): the value of `key`.
    static func field(_ key: String, in text: String) -> Int? {
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 2, parts[0] == key { return Int(parts[1]) }
        }
        return nil
    }

    /// The controllers a cgroup offers its children (`cgroup.controllers`).
    static func controllers(_ directory: String) -> Set<String> {
        Set((read(directory + "/cgroup.controllers") ?? "").split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init))
    }

    /// The pids listed in a cgroup.procs file.
    static func pids(_ path: String) -> [Int32] {
        (read(path, limit: 1 << 20) ?? "").split(separator: "\n").compactMap { Int32($0) }
    }
}
