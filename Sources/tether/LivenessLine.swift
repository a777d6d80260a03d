import TetherGroup

/// A parsed liveness command (`probe`, `hold`, `watch`): what both readers
/// of a command line produce, FastCommandLine for plain lines and
/// ArgumentParser for the rest, so a test can compare the two in-process.
enum LivenessLine: Equatable {
    case probe(target: LockTarget, group: String?, json: Bool)
    case hold(target: LockTarget, group: String?, wait: Seconds?, command: [String])
    case watch(target: LockTarget, group: String?, until: WatchUntil?, timeout: Seconds?, json: Bool)

    /// Runs the command; returns its exit code.
    func run() throws -> Int32 {
        switch self {
        case .probe(let target, let group, let json):
            return try Probe.execute(target: target, group: group, json: json)
        case .hold(let target, let group, let wait, let command):
            return try Hold.execute(target: target, group: group, wait: wait, command: command)
        case .watch(let target, let group, let until, let timeout, let json):
            return try Watch.execute(target: target, group: group, until: until, timeout: timeout, json: json)
        }
    }
}
