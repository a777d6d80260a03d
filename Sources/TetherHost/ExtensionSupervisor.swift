import CTetherSystem
import Glibc
import Logging
import TetherGroup
import TetherIPC
import SystemPackage
import TetherLog
import TetherLoop
import TetherManifest
import TetherSandbox

/// Runs one extension: spawns it in a process group of its own, logs its
/// output under its name (at a bounded rate), restarts it by its manifest's
/// policy with backoff, and stops it, with everything it started.
///
/// An on-demand extension rests `idle` until work for it arrives
/// (`demand()`), and is ended again once it has had no work for its idle
/// timeout: the host tells it (`extension.willTerminate`), then SIGTERM,
/// then SIGKILL after the grace. Ending it so is no failure and counts no
/// restart. It is never restarted by itself either: the next demand
/// launches it, as iOS launches an extension for the next request.
///
/// While its process runs, the host holds the extension's instance lock, so
/// no second copy starts anywhere. If someone else holds it (the extension
/// was started by hand), the supervisor waits for that instance to end.
final class ExtensionSupervisor {
    enum State: String {
        case idle, starting, running, waiting, external, stopping, stopped, failed
    }

    let manifest: ExtensionManifest
    let loop: EventLoop
    let lockPath: String
    let environment: [String]
    /// Ends the group if the host dies (PDEATHSIG reaches the main process only).
    let reaper: GroupReaper
    /// Its confinement and private temporary directory, per launch.
    let sandbox: ExtensionSandbox
    /// What confines it (the running instance's, else what would).
    var sandboxReport: SandboxReport
    /// The running instance's TMPDIR, removed once its group is gone.
    var temporaryDirectory: String?
    /// What its temporary directory holds, counted while it runs.
    var diskUsage: DiskUsageWatcher.Tree?
    /// The running instance's cgroup (where the host has a delegated one):
    /// everything it started, whatever session or group it moved to.
    var cgroup: ExtensionCgroup?
    let graceMilliseconds: UInt64
    let logger: Logger
    let metrics: HostMetrics
    var state: State = .stopped
    var restarts = 0
    /// Output lines dropped by the rate limit since the host started.
    var droppedLines = 0
    var lastExit: ExtensionExit?
    /// Why the host is ending the running process, if it is.
    var ending: ExtensionExit.Reason?
    /// Asked for while it was being ended: launch again once it is gone.
    var relaunchAfterExit = false
    /// Requests in flight to or for it (on-demand: none for the idle timeout ends it).
    var work = 0
    var idleTimer: LoopTimer?
    /// The host's part of an idle end: the notice on the extension's connection.
    var onWillTerminate: (() -> Void)?
    /// After every exit, and when it fails: whatever waits for its hello
    /// gets its answer (unless it is about to be launched again).
    var onGone: ((_ relaunching: Bool) -> Void)?
    /// Whether work waits for its hello.
    var hasWaiters: (() -> Bool)?
    /// Each launch's link (`LaunchLink`): the host's end, and the pid the
    /// other end went to. Without a taker the end is closed.
    var onLink: ((_ descriptor: Int32, _ pid: Int32) -> Void)?
    var process: ChildProcess?
    /// The process group of the running instance: its pid (it leads a session).
    var group: Int32 = 0
    /// Groups of ended launches still being cleared (`endLeftovers`): still
    /// its own until they are, and stops wait for them.
    var leftoverGroups: Set<Int32> = []
    var leftoversPending = 0
    var afterLeftovers: [() -> Void] = []
    var instanceLock: LivenessLock?
    var startedAt: UInt64 = 0
    var backoff = CrashLoopDetector()
    /// Spawn failures for want of a resource (descriptors, processes,
    /// memory) are retried on this schedule, never marked failed.
    var resourceBackoff = CrashLoopDetector.schedule
    var restartTimer: LoopTimer?
    var externalWatcher: LockWatcher?
    /// Everyone waiting for the current stop (the host's shutdown, `extension stop`).
    var stopping: [() -> Void] = []
    /// Its launch being ended (an idle end, a stop): SIGTERM, the grace, SIGKILL.
    lazy var ender = GracefulStop(loop: loop)
    var throttle: OutputThrottle
    var pausedStreams: [PipeStream] = []
    var resumeTimer: LoopTimer?
    var droppedSinceReport = 0
    var lastDropReport: UInt64 = 0

    init(manifest: ExtensionManifest, loop: EventLoop, lockPath: String, environment: [String],
         reaper: GroupReaper, sandbox: ExtensionSandbox, graceMilliseconds: UInt64, logger: Logger,
         metrics: HostMetrics) {
        self.manifest = manifest
        self.metrics = metrics
        metrics.register(extension: manifest.name)
        self.sandbox = sandbox
        sandboxReport = sandbox.expectedReport(for: manifest)
        self.graceMilliseconds = graceMilliseconds
        self.loop = loop
        self.lockPath = lockPath
        self.environment = environment
        self.reaper = reaper
        var logger = logger
        logger[metadataKey: "extension"] = .string(manifest.name)
        self.logger = logger
        throttle = OutputThrottle(now: loop.now)
    }

    var pid: Int32? { state == .running ? process?.pid : nil }

    var statusJSON: JSONValue {
        [
            "name": .string(manifest.name), "role": .string(manifest.role.rawValue),
            "pid": pid.map { .integer($0) } ?? .null, "state": .string(state.rawValue),
            "restarts": .integer(restarts), "droppedLines": .integer(droppedLines),
            "activation": .string(manifest.activation.rawValue), "lastExit": lastExit?.json ?? .null,
            "sandbox": sandboxReport.json,
        ]
    }

    var isOnDemand: Bool { manifest.activation == .onDemand }

    /// Its process is alive (running, or on its way out).
    var hasProcess: Bool { process.map { $0.exitStatus == nil } ?? false }

    /// Being ended: work for it waits for the next instance (`demand()` relaunches).
    var isEnding: Bool { state == .stopping }

    /// The host has it in hand (launching, running, ending, or about to
    /// restart): no one else may attach under its name.
    var isLaunched: Bool { [.starting, .running, .waiting, .stopping].contains(state) || leftoversPending > 0 }

    /// `pid` is its process or anything it started (its process group):
    /// a wrapper script's child saying hello is still the host's own.
    func owns(pid: Int32) -> Bool {
        if leftoverGroups.contains(where: { pid == $0 || getpgid(pid) == $0 }) { return true }
        guard hasProcess, group > 0 else { return false }
        // Its session too: a child that moved to a group of its own stays
        // in it. Its cgroup even holds what left the session.
        return pid == group || getpgid(pid) == group || getsid(pid) == group || cgroup?.contains(pid: pid) == true
    }

    /// Where the host puts it when it starts: running, or idle until asked.
    func begin() {
        // Work that arrived first (`extension start`) has launched it already.
        guard state == .stopped else { return }
        if isOnDemand {
            state = .idle
        } else {
            start()
        }
    }

    /// Work for it arrived (a push, a reload, `extension start`): launch it
    /// unless it runs or is on its way. A failed or stopped extension is
    /// started afresh only when `explicitly` asked (`tether extension start`).
    /// False if it will not run.
    @discardableResult
    func demand(explicitly: Bool = false) -> Bool {
        switch state {
        case .running, .starting, .external:
            return true
        case .stopping:
            // On its way out for idleness: let it go, then launch anew.
            if ending == .idle || explicitly { relaunchAfterExit = true }
            return relaunchAfterExit
        case .waiting:
            if explicitly { restartTimer?.close(); restartTimer = nil; start() }
            return true
        case .idle:
            start()
            return state != .failed
        case .stopped, .failed:
            guard explicitly else { return false }
            backoff = CrashLoopDetector()
            start()
            return state != .failed
        }
    }

    /// A request began (`true`) or ended (`false`); the idle clock restarts.
    func noteWork(began: Bool) {
        work = began ? work + 1 : max(0, work - 1)
        armIdleTimer()
    }

    /// Something happened on its connection: the idle clock restarts.
    func noteActivity() { armIdleTimer() }

    func armIdleTimer() {
        guard isOnDemand, state == .running, ending == nil else { return }
        let timer = idleTimer ?? LoopTimer(loop: loop)
        idleTimer = timer
        timer.start(afterMilliseconds: manifest.idleTimeoutMilliseconds) { [unowned self] in
            guard self.work == 0 else { return }  // the end of that work re-arms it
            // Work waiting for a hello (a second instance's, after a relaunch) is work too.
            if self.hasWaiters?() == true { return self.armIdleTimer() }
            self.endIdle()
        }
    }

    /// Its idle timeout passed with nothing in flight: the notice, SIGTERM
    /// a second later (or at once when it is already gone), SIGKILL after the grace.
    func endIdle() {
        guard let process, process.exitStatus == nil, ending == nil else { return }
        ending = .idle
        state = .stopping
        logger.info("extension '\(manifest.name)' is idle (nothing for \(manifest.idleTimeoutMilliseconds / 1000) s); ending it")
        onWillTerminate?()
        ender.begin(after: min(1_000, graceMilliseconds), grace: graceMilliseconds) { [weak self] in self?.signal($0) }
    }

    /// Its temporary directory passed its disk limit: SIGKILL to the whole
    /// group now, as a memory limit does; the exit says `disk`.
    func killForDisk() {
        guard let process, process.exitStatus == nil, ending == nil || ending == .idle else { return }
        let limit = manifest.diskLimitMiB
        logger.warning("extension '\(manifest.name)' holds more than \(limit) MiB in its temporary directory (its diskLimitMiB); killing it")
        ending = .disk
        signal(SIGKILL)
    }

    /// The watchdog's verdict: SIGKILL to the whole group now; the exit is
    /// recorded as unresponsive and handled by the restart policy.
    func killUnresponsive() {
        guard let process, process.exitStatus == nil, ending == nil || ending == .idle else { return }
        ending = .unresponsive
        signal(SIGKILL)
    }

    func start() {
        guard stopping.isEmpty else { return }
        let lock: LivenessLock?
        do {
            lock = try LivenessLock.tryAcquire(path: lockPath, label: "extension \(manifest.name)")
        } catch {
            if case .system(_, _, let errno) = error, Self.isResourceShortage(errno) {
                return retryLater("cannot take its instance lock: \(error)")
            }
            return failNow("cannot take its instance lock: \(error)")
        }
        guard let lock else { return waitForExternalInstance() }
        instanceLock = lock
        if let note = lock.displacementNote { logger.warning("\(note)") }
        spawn()
    }

    /// An instance started by hand holds the lock: run ours once it is gone.
    func waitForExternalInstance() {
        state = .external
        logger.info("extension '\(manifest.name)' is already running outside the host; waiting for it to end")
        do {
            externalWatcher = try LockWatcher(loop: loop, path: lockPath) { [unowned self] status in
                guard !status.running else { return }
                self.externalWatcher?.close()
                self.externalWatcher = nil
                if self.isOnDemand && !self.relaunchAfterExit {
                    // Its work went to the other instance; rest until asked.
                    self.state = .idle
                    self.onGone?(false)
                } else {
                    self.relaunchAfterExit = false
                    self.start()
                }
            }
        } catch {
            failNow("cannot watch its instance lock: \(error)")
        }
    }
}
