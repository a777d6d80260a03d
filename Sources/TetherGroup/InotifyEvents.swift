#if os(Linux)
import Glibc

/// Reads every pending event from a non-blocking inotify descriptor.
struct InotifyEvents {
    private var buffer = [UInt8](repeating: 0, count: 4096)

    /// Calls `body` with each event's mask and name (empty for the watched
    /// object itself) until the descriptor has nothing more to read.
    mutating func drain(_ fd: Int32, _ body: (UInt32, String) -> Void) {
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return }
            var offset = 0
            // struct inotify_event: wd, mask, cookie, len, then a NUL-padded name of `len` bytes.
            while offset + 16 <= n {
                let mask = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self) }
                let length = Int(buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self) })
                let name = buffer[(offset + 16)..<min(n, offset + 16 + length)].prefix { $0 != 0 }
                body(mask, String(decoding: name, as: UTF8.self))
                offset += 16 + length
            }
        }
    }
}
#endif
