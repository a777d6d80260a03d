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
///   trapping; any other failure (a full disk) closes it and is kept in
///   `writeFailure`, for the command's exit; a slow reader makes the
///   command wait, as Unix tools do.
/// - Attached to a loop (the host, `watch`): lines go into a bounded queue
///   that the loop writes without blocking, when the descriptor is writable.
///   Beyond `limitBytes` lines are dropped and counted, and one "N lines
///   dropped" record follows once the reader catches up. A reader that goes
///   away closes the output; the process goes on (or ends, if it asked to).
///
/// Pipes and terminals are reopened through `/proc/self/fd` to get a file
/// description of our own: making a shared description non-blocking would
/// surprise the shell or the other processes writing to it. A socket (the
/// systemd journal) is written with `MSG_DONTWAIT`. Regular files and
/// devices never stall, so they are written directly in every mode. When
/// stderr is the same file as stdout (`2>&1`, the journal), it goes through
/// stdout's queue, so records never tear each other. Writes end at line
/// boundaries and are at most `PIPE_BUF` long where lines allow, so a pipe
/// takes each whole or not at all.
///
/// The process must ignore SIGPIPE (a closed pipe is then EPIPE); Tether's
/// executables do.
package final class LogOutput: @unchecked Sendable {
    package static let standardOutput = LogOutput(fileDescriptor: STDOUT_FILENO)
    package static let standardError = LogOutput(fileDescriptor: STDERR_FILENO)

    /// Queued bytes allowed while attached; a stalled reader costs at most this.
    package static let defaultLimitBytes = 256 << 10

    package let fileDescriptor: Int32
    package let limitBytes: Int

    private enum Target {
        /// write(2) on the process's own descriptor.
        case direct
        /// Non-blocking writes, driven by the loop.
        case attached(Writer)
        /// The same file as another output: its queue keeps the order.
        case shared(LogOutput)
        case closed
    }

    private struct State {
        var target: Target = .direct
        var queue: [UInt8] = []
        /// A flush is scheduled, or the writer waits for room: either way
        /// new lines need no wake-up of their own.
        var flushPending = false
        var droppedSinceNotice = 0
        var onClosed: (@Sendable () -> Void)?
        /// Why a write failed, unless its reader went (EPIPE): what was
        /// asked for is lost, and the command must not say it succeeded.
        var failure: Errno?
        var renderNotice: @Sendable (String) -> String = { $0 }
    }

    private let state = Mutex(State())
    /// Lines dropped since the process started (a stalled or closed reader).
    private let droppedTotal = Atomic<Int>(0)

    package init(fileDescriptor: Int32, limitBytes: Int = LogOutput.defaultLimitBytes) {
        self.fileDescriptor = fileDescriptor
        self.limitBytes = limitBytes
    }

    package var droppedLines: Int { droppedTotal.load(ordering: .relaxed) }

    /// A write that failed other than by the reader going (a full disk,
    /// an I/O error): what the command printed did not all arrive.
    package var writeFailure: Errno? { state.withLock { $0.failure } }

    package var isClosed: Bool {
        state.withLock { if case .closed = $0.target { true } else { false } }
    }

    /// Writes `line` and a newline. Safe from any thread.
    package func write(_ line: String) {
        var bytes = Array(line.utf8)
        bytes.append(0x0a)
        write(bytes: bytes)
    }

    package func write(bytes: [UInt8]) {
        enum Next { case none, direct, forward(LogOutput), schedule(Writer) }
        let next: Next = state.withLock { state in
            switch state.target {
            case .closed:
                droppedTotal.add(1, ordering: .relaxed)
                return .none
            case .direct:
                return .direct
            case .shared(let other):
                return .forward(other)
            case .attached(let writer):
                guard state.queue.count + bytes.count <= limitBytes else {
                    state.droppedSinceNotice += 1
                    droppedTotal.add(1, ordering: .relaxed)
                    return .none
                }
                state.queue += bytes
                guard !state.flushPending else { return .none }
                state.flushPending = true
                return .schedule(writer)
            }
        }
        switch next {
        case .none: return
        case .direct: writeDirect(bytes)
        case .forward(let other): other.write(bytes: bytes)
        case .schedule(let writer): writer.loop.execute { self.flush() }
        }
    }

    /// Blocking write for one-shot commands (and files and devices in every
    /// mode); a failure closes the output, and is kept unless EPIPE.
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
            case EPIPE, ECONNRESET:
                return markClosed()
            default:
                let failure = Errno(rawValue: errno)
                state.withLock { $0.failure = $0.failure ?? failure }
                return markClosed()
            }
        }
    }

    /// Switches to non-blocking, loop-driven writes. Call on `loop`'s
    /// thread. `onClosed` runs once the reader goes away or a write fails:
    /// on the loop, but for a file or device, written directly, on the
    /// thread whose write failed (hop to the loop).
    /// `sharing`: an output already attached that may be the same file
    /// (stdout, when attaching stderr). `renderNotice` formats the "lines
    /// dropped" record like the others (JSON lines stay JSON).
    package func attach(to loop: EventLoop, sharing other: LogOutput? = nil,
                        renderNotice: (@Sendable (String) -> String)? = nil,
                        onClosed: (@Sendable () -> Void)? = nil) {
        if let other, other !== self, Self.sameFile(fileDescriptor, other.fileDescriptor) {
            return state.withLock { state in if case .direct = state.target { state.target = .shared(other) } }
        }
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
        guard let writer else {
            // Written directly (a file, a device): a failed write still ends
            // what waits on this output, even one before this attach.
            let closedBefore: Bool = state.withLock { state in
                if case .direct = state.target { state.onClosed = onClosed }
                if case .closed = state.target { return true }
                return false
            }
            if closedBefore { onClosed?() }
            return
        }
        let attached: Bool = state.withLock { state in
            if let renderNotice { state.renderNotice = renderNotice }
            guard case .direct = state.target else { return false }
            state.onClosed = onClosed
            state.target = .attached(writer)
            return true
        }
        guard attached else {
            // Closed meanwhile (a direct write met EPIPE): say so, keep nothing.
            writer.close()
            if isClosed { onClosed?() }
            return
        }
        writer.watch(wantsWrite: false)
    }

    static func sameFile(_ first: Int32, _ second: Int32) -> Bool {
        var a = stat(), b = stat()
        guard fstat(first, &a) == 0, fstat(second, &b) == 0 else { return false }
        return a.st_dev == b.st_dev && a.st_ino == b.st_ino
    }

    /// On the loop: writes what the queue holds, as far as the descriptor
    /// takes it without blocking.
    private func flush() {
        let (writer, bytes): (Writer?, [UInt8]) = state.withLock { state in
            guard case .attached(let writer) = state.target else {
                state.flushPending = false
                return (nil, [])
            }
            defer { state.queue = [] }
            return (writer, state.queue)
        }
        guard let writer else { return }
        switch writer.write(bytes) {
        case .failure(let error):
            if error != .brokenPipe && error != .connectionReset { state.withLock { $0.failure = $0.failure ?? error } }
            markClosed()
        case .success(let written):
            let (waiting, notice, render): (Bool, Int, @Sendable (String) -> String) = state.withLock { state in
                // What the descriptor did not take goes back in front of what came since.
                if written < bytes.count { state.queue = Array(bytes[written...]) + state.queue }
                let waiting = !state.queue.isEmpty
                state.flushPending = waiting  // the writable watch wakes us
                guard !waiting else { return (true, 0, state.renderNotice) }
                defer { state.droppedSinceNotice = 0 }
                return (false, state.droppedSinceNotice, state.renderNotice)
            }
            writer.watch(wantsWrite: waiting)
            if notice > 0 {
                write(render("tether: \(notice) output line\(notice == 1 ? "" : "s") dropped (the reader was too slow)"))
            }
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
    /// `timeoutMilliseconds` for a slow reader, and goes back to direct
    /// writes. Safe from any thread once the loop no longer runs.
    package func finish(timeoutMilliseconds: Int32 = 250) {
        let (writer, bytes): (Writer?, [UInt8]) = state.withLock { state in
            state.onClosed = nil
            if case .shared = state.target { state.target = .direct }
            guard case .attached(let writer) = state.target else { return (nil, []) }
            state.target = .direct
            state.flushPending = false
            defer { state.queue = [] }
            return (writer, state.queue)
        }
        guard let writer else { return }
        writer.drain(bytes, timeoutMilliseconds: timeoutMilliseconds)
        writer.closeDescriptor()
    }
}
