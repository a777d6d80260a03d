import Foundation

public struct TestTimeout: Error, CustomStringConvertible {
    public let what: String
    public var description: String { "timed out waiting for \(what)" }
}

/// A real child process with bounded waits: lines from its stdout are read
/// with poll(2) and a deadline, and exit is awaited with a timed semaphore.
public final class TestProcess: @unchecked Sendable {
    public let process = Process()
    private let stdoutPipe = Pipe()
    private let stderrPipe = Pipe()
    private let stdinPipe = Pipe()
    private let exited = DispatchSemaphore(value: 0)
    private var pending: [UInt8] = []
    private var stdoutClosed = false

    public init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.standardOutput = stdoutPipe
        process.standardError = stderrPipe
        process.standardInput = stdinPipe
        let exited = self.exited
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
    }

    public var pid: Int32 { process.processIdentifier }

    /// The next line of stdout, waiting at most `timeout` seconds.
    public func readLine(timeout: Double = 10) throws -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        let fd = stdoutPipe.fileHandleForReading.fileDescriptor
        while true {
            if let newline = pending.firstIndex(of: 0x0a) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                return line
            }
            if stdoutClosed { return pending.isEmpty ? nil : String(decoding: pending, as: UTF8.self) }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw TestTimeout(what: "a line from \(process.executableURL?.lastPathComponent ?? "?")") }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, Int32(remaining * 1000) + 1)
            if ready <= 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n > 0 { pending += chunk[0..<n] } else if n == 0 { stdoutClosed = true }
        }
    }

    /// Reads lines until one equals `expected`.
    @discardableResult
    public func expectLine(_ expected: String, timeout: Double = 10) throws -> [String] {
        var seen: [String] = []
        while let line = try readLine(timeout: timeout) {
            seen.append(line)
            if line == expected { return seen }
        }
        throw TestTimeout(what: "line '\(expected)' (saw \(seen))")
    }

    public func writeStdin(_ text: String) {
        stdinPipe.fileHandleForWriting.write(Data(text.utf8))
    }

    public func closeStdin() {
        try? stdinPipe.fileHandleForWriting.close()
    }

    public func signal(_ signal: Int32) {
        kill(pid, signal)
    }

    /// Waits for exit; returns the status (128 + N when killed by signal N).
    @discardableResult
    public func waitForExit(timeout: Double = 10) throws -> Int32 {
        guard exited.wait(timeout: .now() + timeout) == .success else {
            throw TestTimeout(what: "\(process.executableURL?.lastPathComponent ?? "process") to exit")
        }
        exited.signal()  // later calls return at once
        return process.terminationReason == .uncaughtSignal
            ? 128 + process.terminationStatus : process.terminationStatus
    }

    public var standardError: String {
        String(decoding: stderrPipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    /// Everything left on stdout after exit.
    public func remainingOutput() -> String {
        let rest = stdoutPipe.fileHandleForReading.readDataToEndOfFile()
        return String(decoding: pending + rest, as: UTF8.self)
    }

    deinit {
        if process.isRunning { kill(pid, SIGKILL) }
    }
}

/// Runs a command to completion and returns its exit status and output.
public struct CommandResult: Sendable {
    public let status: Int32
    public let stdout: String
    public let stderr: String
}

public func runCommand(_ executable: String, _ arguments: [String],
                       environment: [String: String]? = nil, timeout: Double = 30) throws -> CommandResult {
    let process = try TestProcess(executable, arguments, environment: environment)
    process.closeStdin()
    // Drain both pipes before waiting so a chatty child never blocks.
    let out = process.remainingOutput()
    let err = process.standardError
    let status = try process.waitForExit(timeout: timeout)
    return CommandResult(status: status, stdout: out, stderr: err)
}
