import FoundationEssentials
import TetherLoop
import TetherLog
#if canImport(Glibc)
import Glibc
#endif

/// Everything the demo starts lives here: a scratch directory and the child
/// processes, driven by a libuv loop on a thread of its own, which reads
/// their output, reaps them, and catches SIGINT, SIGTERM and SIGHUP. Each
/// child runs in a session of its own, so a terminal's Ctrl-C reaches only
/// the demo, which then stops everything in order and removes its files.
final class DemoStage: @unchecked Sendable {
    /// The scratch directory: the group, the secrets, the manifests.
    let root: String
    /// Ours, with TMPDIR set to `root`.
    let childEnvironment: [String]
    private let loopThread: EventLoopThread
    var loop: EventLoop { loopThread.loop }
    /// Guards what the loop and the script share, and wakes the script.
    let condition = MonotonicCondition()
    /// The first signal that asked us to stop (guarded by `condition`).
    private var interruption: Int32?
    /// Every process started, in order (script thread only).
    private(set) var processes: [DemoProcess] = []
    private var signalWatchers: [SignalWatcher] = []  // loop only
    /// Called on the loop with each line a child prints (`--verbose`).
    let echo: (@Sendable (String, String) -> Void)?

    init(echo: (@Sendable (String, String) -> Void)?) throws {
        self.echo = echo
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array("\(base)/tether-demo.XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ buffer in buffer.baseAddress.flatMap { mkdtemp($0) } }) else {
            throw DemoError("cannot make a temporary directory in \(base): \(String(cString: strerror(errno)))")
        }
        root = String(cString: made)
        // Its processes' temporary files (the extensions' private TMPDIRs
        // among them) go under the root too, which goes at the end.
        var environment = ProcessInfo.processInfo.environment
        environment["TMPDIR"] = root
        childEnvironment = environment.map { "\($0.key)=\($0.value)" }.sorted()
        do {
            loopThread = try EventLoopThread()
        } catch {
            rmdir(root)
            throw DemoError("cannot start the event loop: \(error)")
        }
        try onLoop { [self] in
            for signal in [SIGINT, SIGTERM, SIGHUP] {
                signalWatchers.append(try SignalWatcher(loop: loop, signal: signal) { [self] in interrupt($0) })
            }
        }
    }

    // MARK: - Interruption

    private func interrupt(_ signal: Int32) {
        condition.withLock {
            if interruption == nil { interruption = signal }
            condition.broadcast()
        }
    }

    /// Waits on the script thread until `ready` holds (checked under the
    /// lock after every event), for at most `timeout` seconds. Throws
    /// `DemoInterrupted` on a signal when `interruptible`, and `DemoFailure`
    /// naming `what` at the deadline.
    func wait(for what: String, timeout: Double, interruptible: Bool = true, _ ready: () throws -> Bool) throws {
        let deadline = MonotonicClock.nanoseconds() + UInt64(timeout * 1e9)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if interruptible, let signal = interruption { throw DemoInterrupted(signal: signal) }
            if try ready() { return }
            if !condition.wait(untilNanoseconds: deadline) {
                if try ready() { return }
                throw DemoFailure("timed out after \(formatSeconds(timeout)) waiting for \(what)")
            }
        }
    }

    /// Lets `seconds` pass (the demo's pacing, such as a token's lifetime);
    /// only a signal cuts it short.
    func pause(_ seconds: Double) throws {
        guard seconds > 0 else { return }
        do {
            try wait(for: "a pause", timeout: seconds) { false }
        } catch is DemoFailure {
            return
        }
    }

    /// Runs `body` on the loop thread and returns its result.
    func onLoop<T: Sendable>(_ body: @escaping @Sendable () throws -> T) throws -> T {
        let box = ResultBox<T>()
        loop.execute { box.set(Result { try body() }) }
        return try box.wait().get()
    }

    // MARK: - Processes

    /// Starts `executable` in a session of its own, its output read line by line.
    func start(_ name: String, _ executable: String, _ arguments: [String], input: Bool = false) throws -> DemoProcess {
        let process = try DemoProcess.spawn(on: self, name: name, executable: executable, arguments: arguments, input: input)
        processes.append(process)
        return process
    }

    /// Runs a command to its end: its exit status and output.
    func run(_ name: String, _ executable: String, _ arguments: [String], input: String? = nil,
             timeout: Double = 30) throws -> DemoProcess.Outcome {
        let process = try start(name, executable, arguments, input: input != nil)
        if let input {
            process.send(input)
            process.closeInput()
        }
        return try process.outcome(timeout: timeout)
    }

    // MARK: - Teardown

    /// Stops every process (SIGTERM, then SIGKILL after `grace` seconds,
    /// then anything left in their sessions, such as a killed host's
    /// extensions), removes the scratch directory, and stops the loop.
    /// Returns what could not be removed or stopped: empty when clean.
    func tearDown(grace: Double = 3) -> [String] {
        let started = processes
        // The one stop path (SIGTERM, the grace, SIGKILL), on the loop.
        let stops = LoopStops()
        try? onLoop { [loop] in
            for process in started where !process.hasExited {
                let stop = GracefulStop(loop: loop)
                stop.begin(grace: UInt64(max(0, min(grace, 60)) * 1000)) { process.signalOnLoop($0) }
                stops.all.append(stop)
            }
        }
        try? wait(for: "every process to stop", timeout: grace + 2, interruptible: false) { started.allSatisfy(\.endedLocked) }
        try? onLoop {
            for stop in stops.all { stop.cancel() }
            stops.all.removeAll()
        }

        let sessions = Set(started.map(\.pid))
        var stragglers = LiveProcesses.inSessions(sessions)
        for pid in stragglers { kill(pid, SIGKILL) }
        if !stragglers.isEmpty {
            let deadline = MonotonicClock.nanoseconds() + 2_000_000_000
            while !stragglers.isEmpty, MonotonicClock.nanoseconds() < deadline {
                LiveProcesses.waitForExit(stragglers, untilNanoseconds: deadline)
                stragglers = LiveProcesses.inSessions(sessions)
            }
        }
        var left = stragglers.map { "process \($0) (\(LiveProcesses.command($0)))" }
        left += started.filter { !$0.hasExited }.map { "process \($0.pid) (\($0.name))" }

        do {
            try FileManager.default.removeItem(atPath: root)
        } catch {
            left.append("\(root): \(error)")
        }
        if FileManager.default.fileExists(atPath: root) { left.append(root) }
        loopThread.shutdown()
        return left
    }
}

/// A signal asked the demo to stop.
struct DemoInterrupted: Error {
    let signal: Int32
}

/// A step could not go on; the message says what was missing.
struct DemoFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// One result handed from the loop thread to a waiting thread.
private final class ResultBox<T: Sendable>: @unchecked Sendable {
    private let condition = MonotonicCondition()
    private var result: Result<T, any Error>?

    func set(_ value: Result<T, any Error>) {
        condition.withLock {
            result = value
            condition.broadcast()
        }
    }

    func wait() -> Result<T, any Error> {
        condition.withLock {
            while true {
                if let result { return result }
                _ = condition.wait(untilNanoseconds: .max)
            }
        }
    }
}

func formatSeconds(_ seconds: Double) -> String {
    seconds == seconds.rounded() ? "\(TextFormat.fixed(seconds, 0)) s" : "\(TextFormat.fixed(seconds, 1)) s"
}

/// The teardown's stops, touched on the loop's thread only.
private final class LoopStops: @unchecked Sendable {
    var all: [GracefulStop] = []
}
