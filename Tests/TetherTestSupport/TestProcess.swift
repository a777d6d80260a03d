import Foundation
import TetherLoop

package struct TestTimeout: Error, CustomStringConvertible {
    package let what: String
    package init(what: String) { self.what = what }
    package var description: String { "timed out waiting for \(what)" }

    /// What every wait's time limit is multiplied by: 1, or
    /// `$TETHER_TEST_TIMEOUT_SCALE` (1-20) where the machine is known to be
    /// slow (the VM tier's emulated guest runs 10-20 times slower).
    package static let scale: Double = {
        guard let text = getenv("TETHER_TEST_TIMEOUT_SCALE").map({ String(cString: $0) }),
              let value = Double(text), value >= 1 else { return 1 }
        return min(value, 20)
    }()

    /// The time `seconds` from now, scaled (`scale`): every bounded wait's deadline.
    package static func deadline(after seconds: Double) -> Date {
        Date().addingTimeInterval(seconds * scale)
    }
}

package struct SpawnFailed: Error, CustomStringConvertible {
    package let description: String
}

/// One loop thread runs every test child: their exits arrive through
/// pidfds (Foundation's Process waits for a socket that grandchildren
/// inherit, so it misses the exit of a killed parent whose child lives on).
/// The test process writes to children that may have gone (libuv's
/// write(2)): that must be EPIPE, as in Tether's own executables, not the
/// death of the whole run.
let testLoop: EventLoopThread? = {
    signal(SIGPIPE, SIG_IGN)
    return try? EventLoopThread()
}()

/// A real child process with bounded waits: stdout lines and the exit are
/// awaited on a condition variable with a deadline, never by sleeping.
package final class TestProcess: @unchecked Sendable {
    package let executable: String
    package let arguments: [String]
    private let condition = NSCondition()
    private var stdoutBytes: [UInt8] = []
    private var stderrBytes: [UInt8] = []
    private var stdoutEnded = false
    private var stderrEnded = false
    private var status: TerminationStatus?
    private var child: ChildProcess?
    package private(set) var pid: Int32 = 0

    package init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws {
        guard let loop = testLoop?.loop else { throw SpawnFailed(description: "no test event loop") }
        self.executable = executable
        self.arguments = arguments
        let env = environment.map { extra in
            ProcessInfo.processInfo.environment.merging(extra) { $1 }.map { "\($0.key)=\($0.value)" }
        }
        let options = ProcessOptions(executable: executable, arguments: arguments, environment: env,
                                     stdin: .pipe, stdout: .pipe, stderr: .pipe)
        let started = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var failure: Error?
        loop.execute {
            do {
                // Weak: a test that ends (or fails) drops its TestProcess,
                // whose deinit then kills the child; nothing is left running.
                let child = try ChildProcess.spawn(loop: loop, options) { [weak self] status in
                    self?.update { self?.status = status }
                }
                self.child = child
                self.pid = child.pid
                for (stream, bytes, ended) in [(child.stdout, \TestProcess.stdoutBytes, \TestProcess.stdoutEnded),
                                               (child.stderr, \.stderrBytes, \.stderrEnded)] {
                    try stream?.startReading { [weak self] event in
                        guard let self else { return }
                        self.update {
                            switch event {
                            case .data(let more): self[keyPath: bytes] += more
                            case .end, .failed: self[keyPath: ended] = true
                            }
                        }
                    }
                }
            } catch {
                failure = error
            }
            started.signal()
        }
        started.wait()
        if let failure { throw SpawnFailed(description: "cannot start \(executable): \(failure)") }
    }

    private func update(_ body: () -> Void) {
        condition.lock()
        body()
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until `ready()` holds (checked under the lock) or the deadline passes.
    private func wait(timeout: Double, what: String, until ready: () -> Bool) throws {
        let deadline = TestTimeout.deadline(after: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !ready() {
            if !condition.wait(until: deadline) && !ready() {
                // What it said on stderr last tells a slow start from a stuck one.
                let said = String(decoding: stderrBytes.suffix(600), as: UTF8.self)
                throw TestTimeout(what: what + (said.isEmpty ? " (nothing on stderr)" : " (stderr ends: \(said))"))
            }
        }
    }

    private var name: String { "\((executable as NSString).lastPathComponent) \(arguments)" }

    /// The next line of stdout (nil at end of output), waiting at most `timeout` seconds.
    package func readLine(timeout: Double = 10) throws -> String? {
        try wait(timeout: timeout, what: "a line from \(name)") {
            stdoutBytes.contains(0x0a) || stdoutEnded
        }
        condition.lock()
        defer { condition.unlock() }
        guard let newline = stdoutBytes.firstIndex(of: 0x0a) else {
            defer { stdoutBytes.removeAll() }
            return stdoutBytes.isEmpty ? nil : String(decoding: stdoutBytes, as: UTF8.self)
        }
        let line = String(decoding: stdoutBytes[..<newline], as: UTF8.self)
        stdoutBytes.removeSubrange(...newline)
        return line
    }

    /// Reads lines until one equals `expected`.
    @discardableResult
    package func expectLine(_ expected: String, timeout: Double = 10) throws -> [String] {
        try expect("line '\(expected)'", timeout: timeout) { $0 == expected }
    }

    /// Reads lines until one starts with `prefix` (and contains `text`);
    /// returns all lines read.
    @discardableResult
    package func expectLineStarting(_ prefix: String, containing text: String = "", timeout: Double = 10) throws -> [String] {
        try expect("a line starting '\(prefix)' containing '\(text)'", timeout: timeout) {
            $0.hasPrefix(prefix) && (text.isEmpty || $0.contains(text))
        }
    }

    /// Reads lines until one `matches`; a timeout or the end of output
    /// says what was awaited and every line seen meanwhile.
    private func expect(_ what: String, timeout: Double, matches: (String) -> Bool) throws -> [String] {
        var seen: [String] = []
        do {
            while let line = try readLine(timeout: timeout) {
                seen.append(line)
                if matches(line) { return seen }
            }
        } catch let timeout as TestTimeout {
            throw TestTimeout(what: "\(what) from \(name) (saw \(seen); \(timeout.what))")
        }
        throw TestTimeout(what: "\(what) from \(name) before its output ended (saw \(seen))")
    }

    package func writeStdin(_ text: String) {
        let bytes = Array(text.utf8)
        testLoop?.loop.execute { [self] in self.child?.stdin?.write(bytes) }
    }

    package func closeStdin() {
        testLoop?.loop.execute { [self] in self.child?.stdin?.close() }
    }

    package func signal(_ signal: Int32) {
        kill(pid, signal)
    }

    /// Asks it to stop (SIGTERM) and waits; the exit status, as `waitForExit`.
    package func stop(timeout: Double = 20) throws -> Int32 {
        signal(SIGTERM)
        return try waitForExit(timeout: timeout)
    }

    /// Stops it whatever state it is in, for a test's end: SIGTERM, its
    /// exit awaited (bounded), then SIGKILL. Nothing of it outlives the test.
    package func stopAlways(timeout: Double = 20) {
        // Already reaped: its pid may be another process's now.
        condition.lock()
        let running = status == nil
        condition.unlock()
        guard running else { return }
        signal(SIGTERM)
        if (try? waitForExit(timeout: timeout)) == nil {
            signal(SIGKILL)
            _ = try? waitForExit(timeout: timeout)
        }
    }

    /// Waits for exit; returns the status (128 + N when killed by signal N).
    @discardableResult
    package func waitForExit(timeout: Double = 10) throws -> Int32 {
        try wait(timeout: timeout, what: "\(name) to exit") { status != nil }
        condition.lock()
        defer { condition.unlock() }
        return status?.shellCode ?? -1
    }

    /// All of stdout not yet read, once the child closed it.
    package func remainingOutput(timeout: Double = 30) throws -> String {
        try wait(timeout: timeout, what: "the end of \(name)'s output") { stdoutEnded }
        condition.lock()
        defer { condition.unlock() }
        return String(decoding: stdoutBytes, as: UTF8.self)
    }

    /// Waits until stderr contains `text` (the process may keep running).
    package func waitForError(containing text: String, timeout: Double = 10) throws {
        let needle = Array(text.utf8)
        try wait(timeout: timeout, what: "'\(text)' on \(name)'s stderr") {
            stderrBytes.count >= needle.count && (0...(stderrBytes.count - needle.count)).contains {
                stderrBytes[$0..<($0 + needle.count)].elementsEqual(needle)
            }
        }
    }

    package func standardError(timeout: Double = 30) throws -> String {
        try wait(timeout: timeout, what: "the end of \(name)'s errors") { stderrEnded }
        condition.lock()
        defer { condition.unlock() }
        return String(decoding: stderrBytes, as: UTF8.self)
    }

    deinit {
        if status == nil && pid > 0 { kill(pid, SIGKILL) }
        if let child {
            testLoop?.loop.execute { child.close() }
        }
    }
}

/// Runs a command to completion and returns its exit status and output.
package struct CommandResult: Sendable {
    /// The exit status, and all the command printed.
    package let status: Int32, stdout: String, stderr: String

    package init(status: Int32, stdout: String, stderr: String) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
    }
}

package func runCommand(_ executable: String, _ arguments: [String],
                        environment: [String: String]? = nil, timeout: Double = 30) throws -> CommandResult {
    let process = try TestProcess(executable, arguments, environment: environment)
    process.closeStdin()
    let status = try process.waitForExit(timeout: timeout)
    return CommandResult(status: status, stdout: try process.remainingOutput(timeout: timeout),
                         stderr: try process.standardError(timeout: timeout))
}
