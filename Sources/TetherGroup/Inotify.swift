#if os(Linux)
import Glibc
import SystemPackage
import TetherLoop

/// An inotify instance read on an event loop (`uv_poll` on its descriptor):
/// the part `LockWatcher`, `StoreWatcher` and the sandbox's disk usage
/// share. Create, `watch` paths, `start`, and `close` on the loop's thread.
public final class Inotify {
    private let fd: Int32
    private let poller: PollWatcher
    private var buffer = [UInt8](repeating: 0, count: 4096)
    private var closed = false

    public init(loop: EventLoop) throws(Errno) {
        fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { throw Errno(rawValue: errno) }
        do {
            poller = try PollWatcher(loop: loop, fileDescriptor: fd)
        } catch {
            Syscall.close(fd)
            throw error
        }
    }

    /// The watch descriptor (the same for a path already watched).
    @discardableResult
    public func watch(_ path: String, mask: UInt32) throws(Errno) -> Int32 {
        try Syscall.check { inotify_add_watch(fd, path, mask) }
    }

    public func unwatch(_ descriptor: Int32) {
        _ = inotify_rm_watch(fd, descriptor)
    }

    /// One event: its watch, mask, and the name of the entry in a watched
    /// directory (empty for the watched object itself).
    public struct Event: Sendable {
        public let descriptor: Int32
        public let mask: UInt32
        public let name: String
    }

    /// Each time the descriptor is readable, calls `onEvents` with every
    /// pending event, in order.
    public func start(_ onEvents: @escaping ([Event]) -> Void) throws(Errno) {
        try poller.start(.readable) { [unowned self] _ in
            guard !closed else { return }
            onEvents(drain())
        }
    }

    public func close() {
        guard !closed else { return }
        closed = true
        poller.close()
        Syscall.close(fd)
    }

    private func drain() -> [Event] {
        var events: [Event] = []
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return events }
            var offset = 0
            // struct inotify_event: wd, mask, cookie, len, then a NUL-padded name of `len` bytes.
            while offset + 16 <= n {
                let descriptor = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: Int32.self) }
                let mask = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self) }
                let length = Int(buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self) })
                let name = buffer[(offset + 16)..<min(n, offset + 16 + length)].prefix { $0 != 0 }
                events.append(Event(descriptor: descriptor, mask: mask, name: String(decoding: name, as: UTF8.self)))
                offset += 16 + length
            }
        }
    }
}
#endif
