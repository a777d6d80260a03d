import FoundationEssentials
import TetherLoop
import Glibc

/// A child for benchmarks: spawned with posix_spawn, its stdout on a pipe
/// read line by line with a bounded wait, and reaped with wait4 so its CPU
/// time is known exactly.
final class BenchProcess {
    let pid: pid_t
    let arguments: [String]
    private let stdout: Int32
    private var stdin: Int32 = -1
    private var buffered: [UInt8] = []
    private var reaped = false
    /// Its output goes to a thread that drops it (`discardOutput`).
    private var discarding = false

    /// With `stdio`, that descriptor is the child's stdin and stdout, and
    /// there is no output to read. With `writableStdin`, `send` feeds the
    /// child's stdin; otherwise it reads /dev/null. `quietStderr` sends the
    /// child's stderr to /dev/null (a host under abuse warns, by design).
    init(_ arguments: [String], stdio: Int32? = nil, writableStdin: Bool = false, quietStderr: Bool = false) throws {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw BenchError.environment("pipe failed: \(String(cString: strerror(errno)))") }
        // Our end must not leak into the child (nor into anything else we spawn).
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        var input: [Int32] = [-1, -1]
        if writableStdin {
            guard pipe(&input) == 0 else { throw BenchError.environment("pipe failed: \(String(cString: strerror(errno)))") }
            _ = fcntl(input[1], F_SETFD, FD_CLOEXEC)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdio {
            posix_spawn_file_actions_adddup2(&actions, stdio, 0)
            posix_spawn_file_actions_adddup2(&actions, stdio, 1)
        } else {
            posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
            if writableStdin {
                posix_spawn_file_actions_adddup2(&actions, input[0], 0)
            } else {
                posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            }
        }
        if quietStderr { posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0) }
        var argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var spawned: pid_t = 0
        let rc = posix_spawn(&spawned, arguments[0], &actions, nil, &argv, environ)
        close(fds[1])
        if writableStdin { close(input[0]) }
        guard rc == 0 else {
            if writableStdin { close(input[1]) }
            close(fds[0])
            throw BenchError.environment("cannot start \(arguments[0]): \(String(cString: strerror(rc)))")
        }
        pid = spawned
        stdout = fds[0]
        stdin = input[1]
        self.arguments = arguments
    }

    /// Writes `line` and a newline to the child's stdin (`writableStdin`).
    func send(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(stdin, $0.baseAddress, $0.count) }
    }

    deinit {
        if !reaped {
            kill(pid, SIGKILL)
            _ = try? wait()
        }
        close(stdout)
        if stdin >= 0 { close(stdin) }
    }

    /// The next line of output, waiting at most `timeoutMilliseconds`.
    func readLine(timeoutMilliseconds: Int32 = 10_000) throws -> String {
        guard !discarding else { throw BenchError.environment("readLine after discardOutput") }
        let deadline = MonotonicClock.nanoseconds() + UInt64(timeoutMilliseconds) * 1_000_000
        while true {
            if let newline = buffered.firstIndex(of: 0x0a) {
                let line = String(decoding: buffered[..<newline], as: UTF8.self)
                buffered.removeSubrange(...newline)
                return line
            }
            switch nextChunk(until: deadline) {
            case .bytes(let bytes):
                buffered += bytes
            case .timedOut:
                throw BenchError.environment("\(pid) printed nothing in time")
            case .end:
                var status: Int32 = 0
                let ended = waitpid(pid, &status, WNOHANG) == pid
                if ended { reaped = true }
                let how = !ended ? "still running" : (status & 0x7f) == 0 ? "exit status \((status >> 8) & 0xff)"
                    : "killed by signal \(status & 0x7f)"
                throw BenchError.environment("process \(pid) (\(arguments.joined(separator: " "))) closed its output (\(how))")
            }
        }
    }

    private enum Chunk {
        case bytes(ArraySlice<UInt8>)
        /// Its end of the pipe closed: it has ended (or is ending).
        case end
        case timedOut
    }

    /// What its output has next, waiting at most until `deadline`.
    private func nextChunk(until deadline: UInt64) -> Chunk {
        let now = MonotonicClock.nanoseconds()
        var descriptor = pollfd(fd: stdout, events: Int16(POLLIN), revents: 0)
        let left = now >= deadline ? 0 : Int32(clamping: (deadline - now) / 1_000_000)
        guard poll(&descriptor, 1, left) > 0 else { return .timedOut }
        var chunk = [UInt8](repeating: 0, count: 4096)
        let n = chunk.withUnsafeMutableBytes { read(stdout, $0.baseAddress, $0.count) }
        return n > 0 ? .bytes(chunk[..<n]) : .end
    }

    /// Reads until a line satisfies `match`.
    func readUntil(_ match: (String) -> Bool) throws -> String {
        while true {
            let line = try readLine()
            if match(line) { return line }
        }
    }

    /// From now on its output is read and dropped on a thread of its own,
    /// as journald reads a service's. Left unread, a host's pipe fills: it
    /// then drops lines and, at its stop, waits to flush them, which a
    /// benchmark must not time. `readLine` and `terminate` refuse after this.
    func discardOutput() throws {
        // Close-on-exec, as our end is: nothing spawned later may hold it.
        let descriptor = fcntl(stdout, F_DUPFD_CLOEXEC, 0)
        guard descriptor >= 0 else { throw BenchError.environment("dup failed: \(String(cString: strerror(errno)))") }
        discarding = true
        do {
            try DetachedThread.start {
                var chunk = [UInt8](repeating: 0, count: 65_536)
                while true {
                    let n = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                    if n > 0 || (n < 0 && errno == EINTR) { continue }
                    break  // end of file: every writer has closed it
                }
                close(descriptor)
            }
        } catch {
            close(descriptor)
            throw BenchError.environment("no thread to read the output: \(error)")
        }
    }

    /// SIGTERM, and the exit waited for: SIGKILL if its output has not
    /// ended within `graceMilliseconds` (it ignored the SIGTERM, say).
    func terminate(graceMilliseconds: Int32 = 5_000) throws {
        // Its end of output is the thread's to see now.
        guard !discarding else { throw BenchError.environment("terminate after discardOutput: stop with kill and wait") }
        kill(pid, SIGTERM)
        let deadline = MonotonicClock.nanoseconds() + UInt64(graceMilliseconds) * 1_000_000
        reading: while true {
            switch nextChunk(until: deadline) {
            case .bytes: continue
            case .end: break reading
            case .timedOut:
                kill(pid, SIGKILL)
                break reading
            }
        }
        try wait()
    }

    /// Waits for the exit; the CPU time it used, in nanoseconds.
    @discardableResult
    func wait() throws -> UInt64 {
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 {
            guard errno == EINTR else { throw BenchError.environment("wait4 failed: \(String(cString: strerror(errno)))") }
        }
        reaped = true
        func ns(_ time: timeval) -> UInt64 { UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_usec) * 1_000 }
        return ns(usage.ru_utime) + ns(usage.ru_stime)
    }

    var residentBytes: UInt64 { residentMemory(of: pid) }
}

/// A process's resident memory in bytes (`VmRSS`, or another field of
/// /proc/PID/status such as `RssAnon`: memory it does not share), 0 if unknown.
func residentMemory(of pid: pid_t, field: String = "VmRSS") -> UInt64 {
    let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":") } ?? ""
    return (line.split(separator: " ").dropFirst().first.flatMap { UInt64($0) } ?? 0) * 1024
}

/// Waits on the clock: only for a benchmark's measurement window, never to
/// synchronize with another process.
func sleepSeconds(_ seconds: Double) {
    guard seconds > 0, seconds.isFinite else { return }
    var request = timespec(tv_sec: Int(seconds.rounded(.down)), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1e9))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0, errno == EINTR { request = remaining }
}
