#if os(Linux)
import Glibc

/// The kernel's lock table, `/proc/locks`. Read only when a flock(2) lock
/// must be attributed: to name a foreign exclusive holder's pid.
enum FlockTable {
    /// The pid of a process holding an exclusive flock(2) lock on the file
    /// `(device, inode)`, or nil if there is none (or the table is unreadable).
    static func exclusiveHolder(device: dev_t, inode: ino_t) -> Int32? {
        lookUp(device: device, inode: inode) ?? nil
    }

    /// The exclusive flock(2) holder's pid (nil: none), or nil when the table
    /// cannot be read.
    static func lookUp(device: dev_t, inode: ino_t) -> Int32?? {
        guard let table = readTable() else { return nil }
        // Lines look like "3: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF";
        // waiters are marked "3: -> FLOCK ..." and are skipped.
        let wanted = "\(hex(major(device))):\(hex(minor(device))):\(inode)"
        for line in table.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[1] == "FLOCK", fields[3] == "WRITE",
                  fields[5] == wanted[...] else { continue }
            return .some(Int32(fields[4]) ?? 0)
        }
        return .some(nil)
    }

    /// Every process holding a flock(2) lock, shared or exclusive, on the
    /// file `(device, inode)`, as the kernel recorded who took it.
    static func holders(device: dev_t, inode: ino_t) -> [Int32] {
        guard let table = readTable() else { return [] }
        let wanted = "\(hex(major(device))):\(hex(minor(device))):\(inode)"
        return table.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[1] == "FLOCK", fields[5] == wanted[...] else { return nil }
            return Int32(fields[4])
        }
    }

    private static func readTable() -> String? {
        let fd = Glibc.open("/proc/locks", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n > 0 { bytes += chunk[0..<n]; continue }
            if n < 0 && errno == EINTR { continue }
            break
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The kernel prints devices as "%02x:%02x".
    private static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return digits.count < 2 ? "0" + digits : digits
    }

    // glibc's encoding of dev_t (gnu_dev_major / gnu_dev_minor).
    private static func major(_ device: dev_t) -> UInt32 {
        UInt32(truncatingIfNeeded: ((device >> 8) & 0xfff) | ((device >> 32) & ~0xfff))
    }

    private static func minor(_ device: dev_t) -> UInt32 {
        UInt32(truncatingIfNeeded: (device & 0xff) | ((device >> 12) & ~0xff))
    }
}
#endif
