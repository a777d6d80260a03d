import Foundation
import TetherTestSupport

/// A private group directory for one test, and the paths Tether uses in it.
struct TestGroup {
    let dir: TemporaryDirectory
    var path: String { dir.group }

    init() throws { dir = try TemporaryDirectory("tether-cli") }

    func featureLock(_ name: String) -> String { "\(path)/locks/features/\(name).lock" }
    var hostLock: String { "\(path)/locks/host.lock" }

    /// `tether ARGS --group DIR`, with the option before any `--`.
    func withGroup(_ arguments: [String]) -> [String] {
        guard let terminator = arguments.firstIndex(of: "--") else { return arguments + ["--group", path] }
        return Array(arguments[..<terminator]) + ["--group", path] + Array(arguments[terminator...])
    }

    func run(_ arguments: [String]) throws -> CommandResult {
        try tether(withGroup(arguments))
    }

    func start(_ arguments: [String]) throws -> TestProcess {
        try startTether(withGroup(arguments))
    }

    /// `tether hold ... --group DIR -- CMD...`
    func startHold(_ target: [String], _ command: [String], extra: [String] = []) throws -> TestProcess {
        try start(["hold"] + target + extra + ["--"] + command)
    }

    func json(_ result: CommandResult) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
        return object as? [String: Any] ?? [:]
    }
}

func processAlive(_ pid: Int32) -> Bool { kill(pid, 0) == 0 }
