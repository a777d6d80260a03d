import SystemPackage
import TetherLoop
#if canImport(Glibc)
import Glibc
#endif

extension LogOutput {
    /// The descriptor-level half. `watch` and `close` run on the loop;
    /// `write` and `drain` are plain syscalls, safe from any thread.
    final class Writer: @unchecked Sendable {
        let loop: EventLoop
        let fd: Int32
        let isSocket: Bool
        private var watcher: PollWatcher?
        private let onWritable: () -> Void
        private let onGone: () -> Void

        private init(loop: EventLoop, fd: Int32, isSocket: Bool,
                     onWritable: @escaping () -> Void, onGone: @escaping () -> Void) {
            self.loop = loop
            self.fd = fd
            self.isSocket = isSocket
            self.onWritable = onWritable
            self.onGone = onGone
        }

        /// A writer for `fd`, or nil if it never stalls (regular file,
        /// device). Throws when a pipe has no reader left.
        static func open(_ fd: Int32, loop: EventLoop, onWritable: @escaping () -> Void,
                         onGone: @escaping () -> Void) throws(Errno) -> Writer? {
            var info = stat()
            guard fstat(fd, &info) == 0 else { throw Errno(rawValue: errno) }
            let kind = info.st_mode & S_IFMT
            var own: Int32
            var isSocket = false
            switch kind {
            case S_IFIFO, S_IFCHR:
                // Devices other than terminals (/dev/null) never stall.
                if kind == S_IFCHR && isatty(fd) == 0 { return nil }
                // A description of our own, non-blocking. O_NONBLOCK also keeps
                // the open from waiting for a reader (ENXIO if there is none).
                own = Glibc.open("/proc/self/fd/\(fd)", O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
                if own < 0 {
                    if errno == ENXIO { throw Errno(rawValue: ENXIO) }
                    // No /proc, or not allowed to reopen: share the description
                    // and make it non-blocking. Surprising for whoever shares
                    // it, but blocking the loop would be worse.
                    own = fcntl(fd, F_DUPFD_CLOEXEC, 3)
                    guard own >= 0 else { return nil }
                    _ = fcntl(own, F_SETFL, fcntl(own, F_GETFL) | O_NONBLOCK)
                }
            case S_IFSOCK:
                own = fcntl(fd, F_DUPFD_CLOEXEC, 3)
                guard own >= 0 else { return nil }
                isSocket = true
            default:
                return nil
            }
            let writer = Writer(loop: loop, fd: own, isSocket: isSocket, onWritable: onWritable, onGone: onGone)
            let flags = isSocket ? fcntl(own, F_GETFL) : -1
            do {
                writer.watcher = try PollWatcher(loop: loop, fileDescriptor: own)
            } catch {
                Glibc.close(own)
                return nil
            }
            // libuv made the description non-blocking; a socket's is shared (the
            // journal's stream) and sends here never wait (MSG_DONTWAIT): put back
            // (another writer may meet EAGAIN in between, once, at start).
            if flags >= 0 { _ = fcntl(own, F_SETFL, flags) }
            return writer
        }

        /// Bytes written without blocking, or the error that ends the output.
        /// Each write ends at a line boundary and is at most PIPE_BUF long
        /// when the lines allow it: a pipe then takes it whole or not at all.
        func write(_ bytes: [UInt8]) -> Result<Int, Errno> {
            var offset = 0
            while offset < bytes.count {
                let end = Self.chunkEnd(bytes, from: offset)
                let n = bytes.withUnsafeBytes { raw -> Int in
                    guard let base = raw.baseAddress else { return 0 }
                    return isSocket
                        ? send(fd, base + offset, end - offset, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
                        : Glibc.write(fd, base + offset, end - offset)
                }
                if n > 0 { offset += n; continue }
                if n < 0 && errno == EINTR { continue }
                if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { break }
                return .failure(Errno(rawValue: n < 0 ? errno : EPIPE))
            }
            return .success(offset)
        }

        /// The end of the next write: after the last newline within PIPE_BUF,
        /// else (one long line) PIPE_BUF further, else the end.
        static func chunkEnd(_ bytes: [UInt8], from start: Int) -> Int {
            let limit = min(bytes.count, start + Int(PIPE_BUF))
            guard limit < bytes.count else { return bytes.count }
            var index = limit
            while index > start {
                if bytes[index - 1] == 0x0a { return index }
                index -= 1
            }
            return limit
        }

        /// Watches for room to write, or (idle) only for the reader going away.
        func watch(wantsWrite: Bool) {
            guard loop.inEventLoop else {
                loop.execute { self.watch(wantsWrite: wantsWrite) }
                return
            }
            guard let watcher, !watcher.isClosed else { return }
            try? watcher.start(wantsWrite ? .writable : .disconnect) { [weak self] result in
                guard let self else { return }
                switch result {
                case .failure:
                    self.onGone()
                case .success(let events):
                    if events.contains(.writable) {
                        self.onWritable()
                    } else {
                        // Idle and woken: a hang-up or error, the reader is gone.
                        self.onGone()
                    }
                }
            }
        }

        func drain(_ bytes: [UInt8], timeoutMilliseconds: Int32) {
            var rest = bytes[...]
            var remaining = timeoutMilliseconds
            while !rest.isEmpty && remaining > 0 {
                guard case .success(let n) = write(Array(rest)) else { break }
                rest = rest.dropFirst(n)
                if rest.isEmpty { break }
                var fds = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                let started = MonotonicClock.nanoseconds()
                if poll(&fds, 1, remaining) <= 0 { break }
                remaining -= Int32(clamping: (MonotonicClock.nanoseconds() - started) / 1_000_000)
            }
        }

        func close() {
            guard let watcher else { return }
            self.watcher = nil
            watcher.close()
            Glibc.close(fd)
        }

        /// Once the loop no longer runs (it closed the watcher's handle with itself).
        func closeDescriptor() {
            guard watcher != nil else { return }
            watcher = nil
            Glibc.close(fd)
        }
    }
}
