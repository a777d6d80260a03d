import Synchronization
import SystemPackage
import TetherLoop
#if canImport(Glibc)
import Glibc
#endif

/// One of the process's standard outputs, written so that it never traps and,
/// once attached to an event loop, never blocks.
///
/// - Detached (the default, for one-shot commands): a plain `write(2)`. A
///   reader that went away (EPIPE) closes the output quietly instead of
///   trapping; a slow reader makes the command wait, as Unix tools do.
/// - Attached to a loop (the host, `watch`): lines go into a bounded queue
///   that the loop writes without blocking, when the descriptor is writable.
///   Beyond `limitBytes` lines are dropped and counted, and one "N lines
///   dropped" line follows once the reader catches up. A reader that goes
///   away closes the output; the process goes on (or ends, if it asked to).
///
/// Pipes and terminals are reopened through `/proc/self/fd` to get a file
/// description of our own: making a shared description non-blocking would
/// surprise the shell or the other processes writing to it. A socket (the
/// systemd journal) is written with `MSG_DONTWAIT`. Regular files and
/// devices never stall, so they are written directly in every mode.
public final class LogOutput: @unchecked Sendable {
    public static let standardOutput = LogOutput(fileDescriptor: STDOUT_FILENO)
    public static let standardError = LogOutput(fileDescriptor: STDERR_FILENO)

    /// Queued bytes allowed while attached; a stalled reader costs at most this.
    public static let defaultLimitBytes = 256 << 10

    public let fileDescriptor: Int32
    public let limitBytes: Int

    private enum Target {
        /// write(2) on the process's own descriptor.
        case direct
        /// Non-blocking writes, driven by the loop.
        case attached(Writer)
        case closed
    }

    private struct State {
        var target: Target = .direct
        var queue: [UInt8] = []
        var flushScheduled = false
        var dropped = 0
        var droppedSinceNotice = 0
        var onClosed: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())
    /// Lines dropped since the process started (a stalled or closed reader).
    private let droppedTotal = Atomic<Int>(0)

    public init(fileDescriptor: Int32, limitBytes: Int = LogOutput.defaultLimitBytes) {
        self.fileDescriptor = fileDescriptor
        self.limitBytes = limitBytes
    }

    public var droppedLines: Int { droppedTotal.load(ordering: .relaxed) }

    public var isClosed: Bool {
        state.withLock { if case .closed = $0.target { true } else { false } }
    }

    /// Writes `line` and a newline. Safe from any thread.
    public func write(_ line: String) {
        var bytes = Array(line.utf8)
        bytes.append(0x0a)
        write(bytes: bytes)
    }

    public func write(bytes: [UInt8]) {
        enum Next { case none, direct, schedule(Writer) }
        let next: Next = state.withLock { state in
            switch state.target {
            case .closed:
                droppedTotal.add(1, ordering: .relaxed)
                return .none
            case .direct:
                return .direct
            case .attached(let writer):
                guard state.queue.count + bytes.count <= limitBytes else {
                    state.dropped += 1
                    state.droppedSinceNotice += 1
                    droppedTotal.add(1, ordering: .relaxed)
                    return .none
                }
                state.queue += bytes
                guard !state.flushScheduled else { return .none }
                state.flushScheduled = true
                return .schedule(writer)
            }
        }
        switch next {
        case .none: return
        case .direct: writeDirect(bytes)
        case .schedule(let writer): writer.loop.execute { self.flush() }
        }
    }

    /// Blocking write for one-shot commands; EPIPE closes the output.
    private func writeDirect(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return Glibc.write(fileDescriptor, base + offset, raw.count - offset)
            }
            if n > 0 { offset += n; continue }
            if n == 0 { return }  // nothing taken: give up on this line rather than spin
            switch errno {
            case EINTR: continue
            case EAGAIN:
                // Someone made our descriptor non-blocking: wait for room, boundedly.
                var fds = pollfd(fd: fileDescriptor, events: Int16(POLLOUT), revents: 0)
                if poll(&fds, 1, 1_000) <= 0 { return }
            default:
                return markClosed()
            }
        }
    }

    /// Switches to non-blocking, loop-driven writes. Call on `loop`'s
    /// thread. `onClosed` runs on the loop once the reader goes away.
    /// Outputs that never stall (files, devices) stay direct.
    public func attach(to loop: EventLoop, onClosed: (@Sendable () -> Void)? = nil) {
        let writer: Writer?
        do {
            writer = try Writer.open(fileDescriptor, loop: loop,
                                     onWritable: { [weak self] in self?.flush() },
                                     onGone: { [weak self] in self?.markClosed() })
        } catch {
            // No reader at all (a pipe whose reader has exited).
            state.withLock { $0.onClosed = onClosed }
            return markClosed()
        }
        guard let writer else { return }
        state.withLock { state in
            state.onClosed = onClosed
            if case .direct = state.target { state.target = .attached(writer) }
        }
        writer.watch(wantsWrite: false)
    }

    /// On the loop: writes what the queue holds, as far as the descriptor
    /// takes it without blocking.
    private func flush() {
        let (writer, bytes): (Writer?, [UInt8]) = state.withLock { state in
            state.flushScheduled = false
            guard case .attached(let writer) = state.target else { return (nil, []) }
            return (writer, state.queue)
        }
        guard let writer, !bytes.isEmpty else { return }
        switch writer.write(bytes) {
        case .failure:
            markClosed()
        case .success(let written):
            let (empty, notice): (Bool, Int) = state.withLock { state in
                state.queue.removeFirst(min(written, state.queue.count))
                guard state.queue.isEmpty else { return (false, 0) }
                defer { state.droppedSinceNotice = 0 }
                return (true, state.droppedSinceNotice)
            }
            writer.watch(wantsWrite: !empty)
            if notice > 0 { write("tether: \(notice) output line\(notice == 1 ? "" : "s") dropped (the reader was too slow)") }
        }
    }

    private func markClosed() {
        let (writer, onClosed): (Writer?, (@Sendable () -> Void)?) = state.withLock { state in
            if case .closed = state.target { return (nil, nil) }
            var writer: Writer?
            if case .attached(let attached) = state.target { writer = attached }
            state.target = .closed
            state.queue = []
            let onClosed = state.onClosed
            state.onClosed = nil
            return (writer, onClosed)
        }
        if let writer {
            writer.loop.execute { writer.close() }
        }
        onClosed?()
    }

    /// Before exit: writes what is still queued, waiting at most
    /// `timeoutMilliseconds` for a slow reader. Safe from any thread once
    /// the loop no longer runs (or from the loop itself).
    public func finish(timeoutMilliseconds: Int32 = 250) {
        let (writer, bytes): (Writer?, [UInt8]) = state.withLock { state in
            guard case .attached(let writer) = state.target else { return (nil, []) }
            state.target = .direct
            defer { state.queue = [] }
            return (writer, state.queue)
        }
        guard let writer else { return }
        writer.drain(bytes, timeoutMilliseconds: timeoutMilliseconds)
    }

    /// The descriptor-level half, touched on the loop only (but `write` and
    /// `drain` work from any thread: they are plain syscalls).
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
            let own: Int32
            var isSocket = false
            switch kind {
            case S_IFIFO, S_IFCHR:
                // Devices other than terminals (/dev/null) never stall.
                if kind == S_IFCHR && isatty(fd) == 0 { return nil }
                // A description of our own, non-blocking. O_NONBLOCK also keeps
                // the open from waiting for a reader (ENXIO if there is none).
                own = Glibc.open("/proc/self/fd/\(fd)", O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
                guard own >= 0 else {
                    if errno == ENXIO { throw Errno(rawValue: ENXIO) }
                    return nil  // no /proc: stay direct
                }
            case S_IFSOCK:
                own = fcntl(fd, F_DUPFD_CLOEXEC, 3)
                guard own >= 0 else { return nil }
                isSocket = true
            default:
                return nil
            }
            let writer = Writer(loop: loop, fd: own, isSocket: isSocket, onWritable: onWritable, onGone: onGone)
            do {
                writer.watcher = try PollWatcher(loop: loop, fileDescriptor: own)
            } catch {
                Glibc.close(own)
                return nil
            }
            return writer
        }

        /// Bytes written without blocking, or the error that ends the output.
        func write(_ bytes: [UInt8]) -> Result<Int, Errno> {
            var offset = 0
            while offset < bytes.count {
                let n = bytes.withUnsafeBytes { raw -> Int in
                    guard let base = raw.baseAddress else { return 0 }
                    return isSocket
                        ? send(fd, base + offset, raw.count - offset, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
                        : Glibc.write(fd, base + offset, raw.count - offset)
                }
                if n > 0 { offset += n; continue }
                if n < 0 && errno == EINTR { continue }
                if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { break }
                return .failure(Errno(rawValue: n < 0 ? errno : EPIPE))
            }
            return .success(offset)
        }

        /// Watches for room to write, or (idle) only for the reader going away.
        func watch(wantsWrite: Bool) {
            guard loop.inEventLoop else {
                return loop.execute { self.watch(wantsWrite: wantsWrite) }
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
    }
}
