import TetherGroup
import TetherLoop
import TetherSandbox

/// One launch of an extension, from its spawn to its exit: what the
/// lifecycle's running and stopping states carry.
struct ExtensionLaunch {
    let process: ChildProcess
    /// Its process group: the pid (it leads a session).
    let group: Int32
    /// Everything it started, whatever session or group it moved to
    /// (where the host has a delegated cgroup).
    let cgroup: ExtensionCgroup?
    /// Its private TMPDIR, removed once its group is gone (none in a world
    /// of its own: its tmpfs goes with it).
    let temporaryDirectory: String?
    /// What that directory holds, counted while it runs.
    let diskUsage: DiskUsageWatcher.Tree?
    /// Held while it runs: no second copy starts anywhere.
    let instanceLock: LivenessLock
    let startedAt: UInt64
    /// It runs in a world of its own: its PID namespace's init.
    let ownWorld: Bool
}

/// What a supervisor tells the host: one channel, instead of callbacks.
enum SupervisorNotice {
    /// A launch's link: the host's end, and the pid the other end went to.
    case link(descriptor: Int32, pid: Int32)
    /// It is about to be ended for idleness: the notice on its connection.
    case willTerminate
    /// A launch ended (or will not come): whatever waits for its hello
    /// hears, unless it is `relaunching`.
    case gone(relaunching: Bool)
}
