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
    typealias Lifecycle = ExtensionLifecycle<ExtensionLaunch>

    let manifest: ExtensionManifest
    let loop: EventLoop
    let lockPath: String
    let environment: [String]
    /// Ends the group if the host dies (PDEATHSIG reaches the main process only).
    let reaper: GroupReaper
    /// Its confinement and private temporary directory, per launch.
    let sandbox: ExtensionSandbox
    /// What the host's descriptors leave room for: one a launch.
    let slots: LaunchSlots
    /// What confines it (the running instance's, else what would).
    var sandboxReport: SandboxReport
    let graceMilliseconds: UInt64
    let logger: Logger
    let metrics: HostMetrics
    /// Where it is, with the launch it runs: every decision is made there.
    private(set) var lifecycle: Lifecycle
    var restarts = 0
    var lastExit: ExtensionExit?
    /// Requests in flight to or for it (on-demand: none for the idle timeout ends it).
    var work = 0
    /// Work waiting for its hello (the host's count): work too, for the idle clock.
    var waitingForHello = 0
    var idleTimer: LoopTimer?
    /// What it tells the host (a launch's link, an idle end, a launch gone).
    var onNotice: ((SupervisorNotice) -> Void)?
    /// Ended launches still being cleared (`endLeftovers`): still its own
    /// until they are, and stops wait for them.
    var leftovers = Leftovers()
    var restartTimer: LoopTimer?
    var externalWatcher: LockWatcher?
    /// Everyone waiting for the current stop (the host's shutdown, `extension stop`).
    var stopping: [() -> Void] = []
    /// Its launch being ended (an idle end, a stop): SIGTERM, the grace, SIGKILL.
    lazy var ender = GracefulStop(loop: loop)
    /// Its output, logged under its name at a bounded rate.
    let output: ExtensionOutput

    init(manifest: ExtensionManifest, loop: EventLoop, lockPath: String, environment: [String],
         reaper: GroupReaper, sandbox: ExtensionSandbox, slots: LaunchSlots, graceMilliseconds: UInt64, logger: Logger,
         metrics: HostMetrics) {
        self.manifest = manifest
        self.metrics = metrics
        metrics.register(extension: manifest.name)
        self.sandbox = sandbox
        self.slots = slots
        sandboxReport = sandbox.expectedReport(for: manifest)
        self.graceMilliseconds = graceMilliseconds
        self.loop = loop
        self.lockPath = lockPath
        self.environment = environment
        self.reaper = reaper
        var logger = logger
        logger[metadataKey: "extension"] = .string(manifest.name)
        self.logger = logger
        output = ExtensionOutput(name: manifest.name, loop: loop, logger: logger, metrics: metrics)
        lifecycle = Lifecycle(onDemand: manifest.activation == .onDemand, restart: manifest.restart,
                              noRestartExitCodes: manifest.noRestartExitCodes)
    }

    var state: Lifecycle.State { lifecycle.state }

    /// Neither running nor being launched (what holds a launch slot).
    var holdsNoSlot: Bool {
        switch lifecycle.state {
        case .starting, .running, .stopping: false
        default: true
        }
    }

    var pid: Int32? { if case .running(let launch, _) = state { launch.process.pid } else { nil } }

    /// As `status` and `extension list` show it.
    var status: ExtensionStatus {
        var status = ExtensionStatus(name: manifest.name, role: manifest.role.rawValue, pid: pid, supervised: true)
        status.state = state.name
        status.restarts = restarts
        status.droppedLines = output.droppedLines
        status.activation = manifest.activation.rawValue
        status.lastExit = lastExit?.json
        status.sandbox = sandboxReport.json
        return status
    }

    var isOnDemand: Bool { manifest.activation == .onDemand }

    /// Its process is alive (running, or on its way out).
    var hasProcess: Bool { lifecycle.launch.map { $0.process.exitStatus == nil } ?? false }

    /// Being ended: work for it waits for the next instance (`demand()` relaunches).
    var isEnding: Bool { if case .stopping = state { true } else { false } }

    /// The host has it in hand (launching, running, ending, or about to
    /// restart): no one else may attach under its name.
    var isLaunched: Bool {
        switch state {
        case .starting, .running, .waiting, .stopping: true
        default: leftovers.isClearing
        }
    }

    /// `pid` is its process or anything it started (its process group):
    /// a wrapper script's child saying hello is still the host's own.
    func owns(_ peer: PeerProcess) -> Bool {
        if leftovers.holds(pid: peer.pid, group: peer.group) { return true }
        guard hasProcess, let launch = lifecycle.launch, launch.group > 0 else { return false }
        // Its session too: a child that moved to a group of its own stays
        // in it. Its cgroup even holds what left the session.
        let group = launch.group
        return peer.pid == group || peer.group == group || peer.session == group
            || (peer.cgroup != nil && launch.cgroup?.path == peer.cgroup)
    }

    /// Where the host puts it when it starts: running, or idle until asked.
    /// (Work that arrived first, `extension start`, has launched it already.)
    func begin() {
        handle(.begin)
    }

    /// Work for it arrived (a push, a reload, `extension start`): launch it
    /// unless it runs or is on its way. A failed or stopped extension is
    /// started afresh only when `explicitly` asked (`tether extension start`).
    /// False if it will not run.
    @discardableResult
    func demand(explicitly: Bool = false) -> Bool {
        switch state {
        case .stopped, .failed: guard explicitly else { return false }
        default: break
        }
        handle(.demand(explicitly: explicitly))
        if case .stopping(_, _, let relaunch) = state { return relaunch }
        return !state.isFailed
    }

    /// A request began (`true`) or ended (`false`); the idle clock restarts.
    func noteWork(began: Bool) {
        work = began ? work + 1 : max(0, work - 1)
        armIdleTimer()
    }

    /// Something happened on its connection: the idle clock restarts.
    func noteActivity() { armIdleTimer() }

    func armIdleTimer() {
        guard isOnDemand, case .running(_, nil) = state else { return }
        let timer = idleTimer ?? LoopTimer(loop: loop)
        idleTimer = timer
        timer.start(afterMilliseconds: manifest.idleTimeoutMilliseconds) { [unowned self] in
            guard self.work == 0 else { return }  // the end of that work re-arms it
            // Work waiting for a hello (a second instance's, after a relaunch) is work too.
            if self.waitingForHello > 0 { return self.armIdleTimer() }
            self.handle(.idleTimedOut)
        }
    }

    /// It wrote past a disk limit (`why`, logged): SIGKILL to the whole
    /// group now, as a memory limit does; the exit says `disk`.
    func killForDisk(_ why: String) {
        guard hasProcess else { return }
        logger.warning("extension '\(manifest.name)' \(why); killing it")
        handle(.overDiskLimit)
    }

    /// The watchdog's verdict: SIGKILL to the whole group now; the exit is
    /// recorded as unresponsive and handled by the restart policy.
    func killUnresponsive() { handle(.unresponsive) }

    /// One event through the lifecycle, and its actions carried out in order.
    func handle(_ event: Lifecycle.Event) {
        for action in lifecycle.handle(event) { perform(action) }
    }
}
