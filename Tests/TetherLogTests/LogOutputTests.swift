import Dispatch
import Glibc
import Testing
import TetherLog
import TetherLoop
import TetherTestSupport

/// Output that never traps or blocks, on real pipes and sockets whose
/// reader stalls or goes away: the loop keeps turning, the queue stays
/// within its bound, every line that arrives is whole and in order, and
/// what was dropped is said in a line of its own.
@Suite(.timed) struct LogOutputTests {
    static let lines = 2_000, limit = 16 << 10

    /// Line `index`: 100 bytes with its newline.
    static func line(_ index: Int) -> String {
        let number = String(index)
        return "line " + String(repeating: "0", count: 4 - number.count) + number + " " + String(repeating: "x", count: 89)
    }

    /// The notice `count` dropped lines make.
    static func notice(_ count: Int) -> String {
        "tether: \(count) output lines dropped (the reader was too slow)"
    }

    /// A pipe that holds one page, so that a few lines fill it.
    static func smallPipe() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        let setPipeSize: Int32 = 1031  // F_SETPIPE_SZ (Linux)
        try #require(fcntl(ends[1], setPipeSize, 4096) >= 4096)
        return (ends[0], ends[1])
    }

    /// Runs `body` on `loop` and waits for it, at most `seconds`: false if
    /// the loop did not get to it (it is blocked).
    static func onLoop(_ loop: EventLoop, within seconds: Double = 10, _ body: @escaping @Sendable () -> Void) async throws -> Bool {
        try await offThePool {
            let done = DispatchSemaphore(value: 0)
            loop.execute {
                body()
                done.signal()
            }
            return done.wait(timeout: .now() + seconds) == .success
        }
    }

    /// Waits, at most `seconds`, for `count` signals of `semaphore`.
    static func wait(_ semaphore: DispatchSemaphore, _ count: Int = 1, seconds: Double = 10) async throws -> Bool {
        try await offThePool {
            (0..<count).allSatisfy { _ in semaphore.wait(timeout: .now() + seconds) == .success }
        }
    }

    /// Reads `fd` line by line until `until` accepts a line, at most 10 s a read.
    static func readLines(_ fd: Int32, until: @escaping @Sendable (String) -> Bool) async throws -> [String] {
        try await offThePool {
            var lines: [String] = [], pending: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&ready, 1, 10_000) == 1 else { return lines }
                let got = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                guard got > 0 else { return lines }
                pending += chunk.prefix(got)
                while let end = pending.firstIndex(of: 0x0a) {
                    let line = String(decoding: pending[..<end], as: UTF8.self)
                    pending.removeSubrange(...end)
                    lines.append(line)
                    if until(line) { return lines }
                }
            }
        }
    }

    /// 2,000 lines written at once into a pipe that holds a page: the loop
    /// goes on turning, the queue keeps its bound (the rest is dropped and
    /// counted), the writer's own descriptor stays blocking for whoever
    /// shares it; once read, every queued line arrives whole and in order,
    /// then the count of the dropped ones, and the two add up.
    @Test func aStalledReaderNeverBlocksTheLoopAndIsToldWhatWasDropped() async throws {
        signal(SIGPIPE, SIG_IGN)
        let thread = try EventLoopThread()
        defer { thread.shutdown() }
        let (reader, writer) = try Self.smallPipe()
        defer { close(writer) }
        let output = LogOutput(fileDescriptor: writer, limitBytes: Self.limit)
        let closed = DispatchSemaphore(value: 0)
        #expect(try await Self.onLoop(thread.loop) {
            output.attach(to: thread.loop, onClosed: { closed.signal() })
            for index in 0..<Self.lines { output.write(Self.line(index)) }
        })
        // After the flush the writes scheduled: it did not wait for the reader.
        #expect(try await Self.onLoop(thread.loop) {}, "the loop is blocked writing to a full pipe")
        #expect(fcntl(writer, F_GETFL) & O_NONBLOCK == 0, "the shared description was made non-blocking")
        let queued = Self.limit / 100
        #expect(output.droppedLines == Self.lines - queued)

        let received = try await Self.readLines(reader) { $0.hasPrefix("tether: ") }
        #expect(Array(received.dropLast()) == (0..<queued).map(Self.line), "lines torn, lost or out of order")
        #expect(received.last == Self.notice(Self.lines - queued))
        // The reader goes: the output closes, and the process goes on.
        close(reader)
        #expect(try await Self.wait(closed), "the reader's going away went unnoticed")
        output.write("after")
        #expect(output.isClosed && output.droppedLines == Self.lines - queued + 1)
    }

    /// A reader that goes away while nothing is being written is noticed
    /// (a hang-up, not a failed write); one gone before the output is
    /// attached, at once, a named FIFO's too. None traps.
    @Test func aReaderThatGoesAwayClosesTheOutput() async throws {
        signal(SIGPIPE, SIG_IGN)
        let thread = try EventLoopThread()
        defer { thread.shutdown() }
        for goneBefore in [false, true] {
            let (reader, writer) = try Self.smallPipe()
            defer { close(writer) }
            let output = LogOutput(fileDescriptor: writer)
            let closed = DispatchSemaphore(value: 0)
            if goneBefore { close(reader) }
            #expect(try await Self.onLoop(thread.loop) { output.attach(to: thread.loop, onClosed: { closed.signal() }) })
            if !goneBefore { close(reader) }
            #expect(try await Self.wait(closed), "gone before: \(goneBefore)")
            #expect(output.isClosed)
        }
        // A named FIFO (`tether host > fifo`) whose reader went: reopening it
        // must not wait for a reader to come.
        let directory = try TemporaryDirectory("tether-log-output")
        let fifo = directory.path + "/fifo"
        try #require(mkfifo(fifo, 0o600) == 0)
        let fifoReader = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        let fifoWriter = open(fifo, O_WRONLY | O_CLOEXEC)
        try #require(fifoReader >= 0 && fifoWriter >= 0)
        defer { close(fifoWriter) }
        close(fifoReader)
        let named = LogOutput(fileDescriptor: fifoWriter)
        let namedClosed = DispatchSemaphore(value: 0)
        #expect(try await Self.onLoop(thread.loop) { named.attach(to: thread.loop, onClosed: { namedClosed.signal() }) },
                "attaching waits for a reader of the FIFO")
        #expect(try await Self.wait(namedClosed) && named.isClosed)
        // Not attached (a one-shot command): a plain write meets EPIPE and closes.
        let (reader, writer) = try Self.smallPipe()
        defer { close(writer) }
        close(reader)
        let direct = LogOutput(fileDescriptor: writer)
        direct.write("to no one")
        #expect(direct.isClosed)
    }

    /// A socket (the journal) whose reader stalls: written with
    /// `MSG_DONTWAIT`, so the loop goes on and the socket's description,
    /// shared with whoever passed it, stays blocking.
    @Test func aStalledSocketNeverBlocksTheLoop() async throws {
        signal(SIGPIPE, SIG_IGN)
        let thread = try EventLoopThread()
        defer { thread.shutdown() }
        var ends: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0)
        defer { close(ends[0]) }
        var small: Int32 = 4096
        try #require(setsockopt(ends[0], SOL_SOCKET, SO_SNDBUF, &small, socklen_t(MemoryLayout<Int32>.size)) == 0)
        let output = LogOutput(fileDescriptor: ends[0], limitBytes: Self.limit)
        let closed = DispatchSemaphore(value: 0)
        #expect(try await Self.onLoop(thread.loop) {
            output.attach(to: thread.loop, onClosed: { closed.signal() })
            for index in 0..<Self.lines { output.write(Self.line(index)) }
        })
        #expect(try await Self.onLoop(thread.loop) {}, "the loop is blocked writing to a full socket")
        #expect(fcntl(ends[0], F_GETFL) & O_NONBLOCK == 0)
        #expect(output.droppedLines == Self.lines - Self.limit / 100)
        let received = try await Self.readLines(ends[1]) { $0.hasPrefix("tether: ") }
        #expect(received.last == Self.notice(output.droppedLines))
        #expect(Array(received.dropLast()) == (0..<(Self.limit / 100)).map(Self.line))
        close(ends[1])
        #expect(try await Self.wait(closed), "the reader's going away went unnoticed")
    }

    /// At exit, what is queued is written to a stalled reader for the time
    /// given and no longer: the process ends.
    @Test func finishingWaitsForAStalledReaderOnlySoLong() async throws {
        signal(SIGPIPE, SIG_IGN)
        let thread = try EventLoopThread()
        let (reader, writer) = try Self.smallPipe()
        defer { close(reader); close(writer) }
        let output = LogOutput(fileDescriptor: writer, limitBytes: Self.limit)
        #expect(try await Self.onLoop(thread.loop) {
            output.attach(to: thread.loop)
            for index in 0..<Self.lines { output.write(Self.line(index)) }
        })
        #expect(try await Self.onLoop(thread.loop) {})
        thread.shutdown()
        let finished = try await offThePool {
            let done = DispatchSemaphore(value: 0)
            try DetachedThread.start {
                output.finish(timeoutMilliseconds: 100)
                done.signal()
            }
            return done.wait(timeout: .now() + 10) == .success
        }
        #expect(finished, "finish waited past its time for a reader that never read")
    }
}
