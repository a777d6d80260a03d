import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Thin typed wrappers over the syscalls the group layer needs, in the style
/// of swift-system: `-1` becomes a thrown `Errno`, EINTR is retried.
enum Syscall {
    @inline(__always)
    static func check<T: FixedWidthInteger>(_ body: () -> T) throws(Errno) -> T {
        while true {
            let result = body()
            if result != -1 { return result }
            let error = Errno(rawValue: errno)
            if error != .interrupted { throw error }
        }
    }

    /// Every descriptor Tether opens in a group is close-on-exec, refuses to
    /// follow a symlink in the last path component, and never waits at its
    /// open for a FIFO's other end: anyone who may write a group directory
    /// may plant a FIFO where a file was (`O_NONBLOCK` changes nothing for
    /// a regular file, a directory or a lock). What was opened is looked at
    /// after (`OwnedFile`).
    static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o600) throws(Errno) -> Int32 {
        try check { Glibc.open(path, flags | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, mode) }
    }

    static func close(_ fd: Int32) {
        // Linux releases the descriptor even when close reports EINTR, so
        // it is never retried.
        _ = Glibc.close(fd)
    }

    static func fstat(_ fd: Int32) throws(Errno) -> stat {
        var info = stat()
        _ = try check { Glibc.fstat(fd, &info) }
        return info
    }

    static func lstat(_ path: String) throws(Errno) -> stat {
        var info = stat()
        _ = try check { Glibc.lstat(path, &info) }
        return info
    }

    static func mkdir(_ path: String, mode: mode_t) throws(Errno) {
        _ = try check { Glibc.mkdir(path, mode) }
    }

    /// `flock(2)`; returns false when a non-blocking request would block.
    static func flock(_ fd: Int32, _ operation: Int32) throws(Errno) -> Bool {
        do {
            _ = try check { systemFlock(fd, operation) }
            return true
        } catch .wouldBlock {
            return false
        }
    }

    static func pwrite(_ fd: Int32, _ bytes: [UInt8], at offset: off_t) throws(Errno) {
        var written = 0
        while written < bytes.count {
            written += try check {
                bytes.withUnsafeBytes { buffer in
                    Glibc.pwrite(fd, buffer.baseAddress.map { $0 + written }, buffer.count - written,
                                 offset + off_t(written))
                }
            }
        }
    }

    static func pread(_ fd: Int32, maximum: Int, at offset: off_t) throws(Errno) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: maximum)
        let n = try check {
            bytes.withUnsafeMutableBytes { Glibc.pread(fd, $0.baseAddress, $0.count, offset) }
        }
        bytes.removeSubrange(n...)
        return bytes
    }

    static func ftruncate(_ fd: Int32, _ length: off_t) throws(Errno) {
        _ = try check { Glibc.ftruncate(fd, length) }
    }

    /// True if a process with `pid` exists (EPERM means it exists but is
    /// someone else's).
    static func processExists(_ pid: Int32) -> Bool {
        pid > 0 && (Glibc.kill(pid, 0) == 0 || errno == EPERM)
    }
}

/// `flock(2)`: spelled through a value because `Glibc.flock` names the struct.
private let systemFlock: @Sendable (Int32, Int32) -> Int32 = flock

extension stat {
    var isRegularFile: Bool { (st_mode & S_IFMT) == S_IFREG }
    var isDirectory: Bool { (st_mode & S_IFMT) == S_IFDIR }
    var isSymlink: Bool { (st_mode & S_IFMT) == S_IFLNK }
    func sameFile(as other: stat) -> Bool { st_dev == other.st_dev && st_ino == other.st_ino }
}
