import Glibc
import TetherGroup
import TetherIPC
import TetherLoop

/// Runs one extension: spawns it, prefixes its output with its name,
/// restarts it by its manifest's policy with backoff, and stops it.
///
/// While its process runs, the host holds the extension's instance lock, so
/// no second copy starts anywhere. If someone else holds it (the extension
/// was started by hand), the supervisor waits for that instance to end.
final class ExtensionSupervisor {
    enum State: String {
        case starting, running, waiting, external, stopped, failed
    }

    let manifest: ExtensionManifest
    private let loop: EventLoop
    private let lockPath: String
    private let environment: [String]
    private let launcher: [String]
    private let log: HostLog
    private(set) var state: State = .stopped
    private(set) var restarts = 0
    private var process: ChildProcess?
    private var instanceLock: LivenessLock?
    private var startedAt: UInt64 = 0
    private var backoff = RestartBackoff()
    private var restartTimer: LoopTimer?
    private var externalWatcher: LockWatcher?
    private var stopping: (() -> Void)?
    private var killTimer: LoopTimer?

    init(manifest: ExtensionManifest, loop: EventLoop, lockPath: String, environment: [String],
         launcher: [String], log: HostLog) {
        self.manifest = manifest
        self.loop = loop
        self.lockPath = lockPath
        self.environment = environment
        self.launcher = launcher
        self.log = log
    }

    var pid: Int32? { state == .running ? process?.pid : nil }

    var statusJSON: JSONValue {
        [
            "name": .string(manifest.name), "role": .string(manifest.role.rawValue),
            "pid": pid.map { .number(Double($0)) } ?? .null, "state": .string(state.rawValue),
            "restarts": .number(Double(restarts)),
        ]
    }

    func start() {
        guard stopping == nil else { return }
        let lock: LivenessLock?
        do {
            lock = try LivenessLock.tryAcquire(path: lockPath, label: "extension \(manifest.name)")
        } catch {
            return fail("cannot take its instance lock: \(error)")
        }
        guard let lock else { return waitForExternalInstance() }
        instanceLock = lock
        spawn()
    }

    /// An instance started by hand holds the lock: run ours once it is gone.
    private func waitForExternalInstance() {
        state = .external
        log.info("extension '\(manifest.name)' is already running outside the host; waiting for it to end")
        do {
            externalWatcher = try LockWatcher(loop: loop, path: lockPath) { [unowned self] status in
                guard !status.running else { return }
                self.externalWatcher?.close()
                self.externalWatcher = nil
                self.start()
            }
        } catch {
            fail("cannot watch its instance lock: \(error)")
        }
    }

    private func spawn() {
        state = .starting
        let command = launcher + [manifest.executable] + manifest.arguments
        let options = ProcessOptions(executable: command[0], arguments: Array(command.dropFirst()),
                                     environment: environment, stdin: .ignore, stdout: .pipe, stderr: .pipe)
        do {
            let process = try ChildProcess.spawn(loop: loop, options) { [unowned self] status in self.exited(status) }
            self.process = process
            startedAt = loop.now
            state = .running
            forward(process.stdout, to: log.info)
            forward(process.stderr, to: log.error)
        } catch {
            releaseInstance()
            fail("cannot start \(manifest.executable): \(error)")
        }
    }

    private func forward(_ stream: PipeStream?, to sink: @escaping @Sendable (String) -> Void) {
        guard let stream else { return }
        var splitter = LineSplitter()
        let prefix = "[\(manifest.name)] "
        try? stream.startReading { event in
            switch event {
            case .data(let bytes):
                for line in splitter.append(bytes) { sink(prefix + line) }
            case .end, .failed:
                if let rest = splitter.flush() { sink(prefix + rest) }
                stream.close()
            }
        }
    }

    private func exited(_ status: TerminationStatus) {
        let ranFor = loop.now - startedAt
        process?.close()
        process = nil
        releaseInstance()
        if let stopping {
            state = .stopped
            killTimer?.close()
            killTimer = nil
            self.stopping = nil
            stopping()
            return
        }
        let wantsRestart = switch manifest.restart {
        case .always: true
        case .onFailure: status != .exited(0)
        case .never: false
        }
        guard wantsRestart else {
            state = .stopped
            log.info("extension '\(manifest.name)' \(status)")
            return
        }
        guard let delay = backoff.delayAfterFailure(ranFor: ranFor) else {
            return fail("\(status) \(RestartBackoff.crashLoopLimit) times in a row, each within "
                        + "\(RestartBackoff.stableAfter / 1000) s of starting; not restarting it")
        }
        state = .waiting
        log.info("extension '\(manifest.name)' \(status); restarting in \(delay) ms")
        let timer = restartTimer ?? LoopTimer(loop: loop)
        restartTimer = timer
        timer.start(afterMilliseconds: delay) { [unowned self] in
            self.restarts += 1
            self.start()
        }
    }

    private func fail(_ reason: String) {
        state = .failed
        log.error("extension '\(manifest.name)' failed: \(reason)")
    }

    private func releaseInstance() {
        instanceLock?.release()
        instanceLock = nil
    }

    /// SIGTERM, then SIGKILL after `graceMilliseconds`; `completion` once it is gone.
    func stop(graceMilliseconds: UInt64, completion: @escaping () -> Void) {
        restartTimer?.close()
        restartTimer = nil
        externalWatcher?.close()
        externalWatcher = nil
        guard let process, process.exitStatus == nil else {
            state = state == .failed ? .failed : .stopped
            return completion()
        }
        stopping = completion
        try? process.signal(SIGTERM)
        let timer = LoopTimer(loop: loop)
        killTimer = timer
        timer.start(afterMilliseconds: graceMilliseconds) { [weak process] in try? process?.signal(SIGKILL) }
    }
}
