import FoundationEssentials
import SystemPackage
import TetherLoop
#if canImport(Glibc)
import Glibc
#endif

/// One child of the demo: a `ChildProcess` in a session of its own,
/// its stdout and stderr split into lines as they arrive, its exit recorded.
/// The script waits for lines and exits with bounded timeouts; all the
/// state below is guarded by the stage's condition.
final class DemoProcess: @unchecked Sendable {
    let name: String
    private(set) var pid: pid_t = 0
    private unowned let stage: DemoStage
    private var child: ChildProcess?  // loop only
    private var lines: [String] = []
    private var errorLines: [String] = []
    private var partial: [[UInt8]] = [[], []]
    private var cursor = 0
    private var openStreams = 2
    private var status: TerminationStatus?

    /// How a command ended and what it printed.
    struct Outcome {
        let status: TerminationStatus
        let stdout: [String]
        let stderr: [String]
        var succeeded: Bool { status == .exited(0) }
        var text: String { stdout.joined(separator: "\n") }
        /// The first line of stderr, for a failure's detail.
        var reason: String { stderr.first { !$0.isEmpty } ?? "\(status)" }
    }

    private init(name: String, stage: DemoStage) {
        self.name = name
        self.stage = stage
    }

    static func spawn(on stage: DemoStage, name: String, executable: String, arguments: [String],
                      input: Bool) throws -> DemoProcess {
        let process = DemoProcess(name: name, stage: stage)
        let options = ProcessOptions(executable: executable, arguments: arguments, environment: stage.childEnvironment,
                                     stdin: input ? .pipe : .ignore,
                                     stdout: .pipe, stderr: .pipe, detached: true)
        do {
            try stage.onLoop { try process.start(options) }
        } catch let error as Errno {
            throw DemoError("cannot start \(executable): \(error)")
        }
        return process
    }

    /// On the loop.
    private func start(_ options: ProcessOptions) throws {
        let child = try ChildProcess.spawn(loop: stage.loop, options) { [self] status in
            stage.condition.withLock {
                self.status = status
                stage.condition.broadcast()
            }
            self.child?.close()
        }
        self.child = child
        pid = child.pid
        for (index, stream) in [child.stdout, child.stderr].enumerated() {
            guard let stream else { continue }
            try stream.startReading { [self] event in
                switch event {
                case .data(let bytes): received(bytes, stream: index)
                case .end, .failed:
                    stream.close()
                    received(nil, stream: index)
                }
            }
        }
    }

    /// On the loop: `bytes` from stream 0 (stdout) or 1 (stderr), nil at its end.
    private func received(_ bytes: [UInt8]?, stream: Int) {
        var complete: [String] = []
        if let bytes {
            partial[stream] += bytes
            while let newline = partial[stream].firstIndex(of: 0x0a) {
                complete.append(String(decoding: partial[stream][..<newline], as: UTF8.self))
                partial[stream].removeSubrange(...newline)
            }
        } else if !partial[stream].isEmpty {
            complete.append(String(decoding: partial[stream], as: UTF8.self))
            partial[stream] = []
        }
        stage.condition.withLock {
            if stream == 0 { lines += complete } else { errorLines += complete }
            if bytes == nil { openStreams -= 1 }
            stage.condition.broadcast()
        }
        if let echo = stage.echo {
            for line in complete { echo(stream == 0 ? name : "\(name) (stderr)", line) }
        }
    }

    // MARK: - For the script

    /// The number of stdout lines so far: pass it as `since` to find a line
    /// printed after this moment, in whatever order lines arrive.
    var mark: Int { stage.condition.withLock { lines.count } }

    /// Waits for a stdout line that `match` accepts, searching from `since`
    /// (default: after the last line found), and returns it.
    @discardableResult
    func line(_ what: String, since: Int? = nil, timeout: Double = 10, where match: (String) -> Bool) throws -> String {
        var found: String?
        try stage.wait(for: "\(what) from \(name)", timeout: timeout) {
            let start = since ?? cursor
            if let index = lines[min(start, lines.count)...].firstIndex(where: match) {
                found = lines[index]
                cursor = max(cursor, index + 1)
                return true
            }
            if let status, openStreams == 0 {
                throw DemoFailure("\(name) ended (\(status)) before \(what)\(errorLines.first.map { ": \($0)" } ?? "")")
            }
            return false
        }
        return found ?? ""
    }

    /// Waits for the exit and the end of the output.
    func outcome(timeout: Double = 30) throws -> Outcome {
        try stage.wait(for: "\(name) to finish", timeout: timeout) { endedLocked }
        return stage.condition.withLock { Outcome(status: status ?? .exited(-1), stdout: lines, stderr: errorLines) }
    }

    /// Exited, and its output read to the end (call with the stage's lock held).
    var endedLocked: Bool { status != nil && openStreams == 0 }
    var hasExited: Bool { stage.condition.withLock { status != nil } }

    func send(_ line: String) {
        let bytes = Array((line.hasSuffix("\n") ? line : line + "\n").utf8)
        loopDo { child in child.stdin?.write(bytes) }
    }

    func closeInput() { loopDo { child in child.stdin?.close() } }

    /// Sends `signal` unless the process has been reaped (then its pid may
    /// belong to someone else).
    func signal(_ signal: Int32) { loopDo { child in try? child.signal(signal) } }

    /// The same, from the loop's own thread.
    func signalOnLoop(_ signal: Int32) {
        if let child, !child.isClosed { try? child.signal(signal) }
    }

    private func loopDo(_ body: @escaping @Sendable (ChildProcess) -> Void) {
        try? stage.onLoop { [self] in
            if let child = self.child, !child.isClosed { body(child) }
        }
    }
}
