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
    /// What it shares with the host's other supervisors.
    let resources: SupervisorResources
    let lockPath: String
    let environment: [String]
    /// What confines it (the running instance's, else what would).
    var sandboxReport: SandboxReport
    let logger: Logger
    /// Where it is, with the launch it runs, its work in flight and its
    /// restarts: every decision is made there.
    private(set) var lifecycle: Lifecycle
    var lastExit: ExtensionExit?
    /// Its one clock: the idle timeout while it runs on demand, the delay
    /// of a restart or retry while it waits, the notice and the grace while
    /// it is ended (never two at once).
    var clock: LoopTimer?
    /// What it tells the host (a launch's link, an idle end, a launch gone).
    var onNotice: ((SupervisorNotice) -> Void)?
    /// Ended launches still being cleared (`endLeftovers`): still its own
    /// until they are, and stops wait for them.
    var leftovers = Leftovers()
    var externalWatcher: LockWatcher?
    /// Its output, logged under its name at a bounded rate.
    let output: ExtensionOutput
    /// The process whose hello said its SIGTERM handler ends it: a stop
    /// takes it at its word (`signal`) for that launch alone, whose pid it
    /// is (a link's hello speaks for the pid the host spawned).
    var endsOnSigterm: Int32?

    init(manifest: ExtensionManifest, resources: SupervisorResources, lockPath: String, environment: [String],
         logger: Logger) {
        self.manifest = manifest
        self.resources = resources
        resources.metrics.register(extension: manifest.name)
        sandboxReport = resources.sandbox.expectedReport(for: manifest)
        self.lockPath = lockPath
        self.environment = environment
        var logger = logger
        logger[metadataKey: "extension"] = .string(manifest.name)
        self.logger = logger
        output = ExtensionOutput(name: manifest.name, loop: resources.loop, logger: logger, metrics: resources.metrics)
        lifecycle = Lifecycle(onDemand: manifest.activation == .onDemand, restart: manifest.restart,
                              noRestartExitCodes: manifest.noRestartExitCodes,
                              graceMilliseconds: resources.graceMilliseconds)
    }

    var state: Lifecycle.State { lifecycle.state }
    var restarts: Int { lifecycle.restarts }

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
        if case .stopping(_, let ending) = state { return ending.relaunch }
        return !state.isFailed
    }

    /// A request began (`true`) or ended (`false`); the idle clock restarts.
    func noteWork(began: Bool) { handle(began ? .workBegan : .workEnded) }

    /// Something happened on its connection: the idle clock restarts.
    func noteActivity() { handle(.activity) }

    /// Waiters for its hello came (a positive `change`) or went.
    func noteHelloWaiters(_ change: Int) { handle(.helloWaiters(change: change)) }

    /// Its clock from now: `then` after `milliseconds` (what it was set for before is forgotten).
    func setClock(afterMilliseconds milliseconds: UInt64, _ then: @escaping () -> Void) {
        let timer = clock ?? LoopTimer(loop: resources.loop)
        clock = timer
        timer.start(afterMilliseconds: milliseconds, then)
    }

    func stopClock() {
        clock?.close()
        clock = nil
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
