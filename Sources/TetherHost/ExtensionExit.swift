import TetherIPC
import TetherLoop
#if canImport(Glibc)
import Glibc
#endif

/// How and why an extension's process last ended, as `status --json` gives
/// it in `lastExit`.
struct ExtensionExit {
    enum Reason: String {
        /// It exited by itself, with a code.
        case exited
        /// A signal the host did not send ended it.
        case crashed
        /// The watchdog killed it: a ping went unanswered for a period.
        case unresponsive
        /// On-demand, and the host ended it after its idle timeout.
        case idle
        /// Asked to stop (`tether extension stop`, or the host stopping).
        case stopped
        /// Its cgroup's memory limit killed it (the kernel counts it in memory.events).
        case memory
        /// It wrote a file past its size limit (`RLIMIT_FSIZE`: SIGXFSZ).
        case disk
    }

    let status: TerminationStatus
    let reason: Reason
    /// ISO 8601, UTC.
    let at: String
    /// The memory limit in force, shown beside the exit: an extension that
    /// hit it ends as its runtime reacts (an allocation failure, a crash).
    let memoryLimitMiB: Int?

    /// The reason the host meant (`intended`), else what the status says.
    init(status: TerminationStatus, intended: Reason?, memoryLimitMiB: Int? = nil, at: String = WallClock.iso8601()) {
        self.status = status
        self.at = at
        self.memoryLimitMiB = memoryLimitMiB
        if let intended {
            reason = intended
        } else if case .signaled(let signal) = status {
            reason = signal == SIGXFSZ ? .disk : .crashed
        } else {
            reason = .exited
        }
    }

    var json: JSONValue {
        var object: [String: JSONValue] = ["reason": .string(reason.rawValue), "at": .string(at)]
        if let memoryLimitMiB { object["memoryLimitMiB"] = .integer(memoryLimitMiB) }
        switch status {
        case .exited(let code): object["code"] = .integer(code)
        case .signaled(let signal): object["signal"] = .integer(signal)
        }
        return .object(object)
    }
}
