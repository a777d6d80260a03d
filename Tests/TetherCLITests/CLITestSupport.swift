import Foundation
import Testing
import TetherTestSupport

/// A private group directory for one test, and the paths Tether uses in it.
struct TestGroup {
    let dir: TemporaryDirectory
    var path: String { dir.group }

    init() throws { dir = try TemporaryDirectory("tether-cli") }

    func featureLock(_ name: String) -> String { "\(path)/locks/features/\(name).lock" }
    var hostLock: String { "\(path)/locks/host.lock" }
    /// Where the group's secrets live: beside it.
    var secrets: String { dir.path + "/.group.secrets" }
    var credentialsPath: String { secrets + "/credentials.json" }

    /// The secrets directory, as the first credential write makes it.
    func makeSecrets() throws {
        try FileManager.default.createDirectory(atPath: secrets, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
    }

    /// `tether ARGS --group DIR`, with the option before any `--`.
    func withGroup(_ arguments: [String]) -> [String] {
        guard let terminator = arguments.firstIndex(of: "--") else { return arguments + ["--group", path] }
        return Array(arguments[..<terminator]) + ["--group", path] + Array(arguments[terminator...])
    }

    func run(_ arguments: [String], timeout: Double = 30) throws -> CommandResult {
        try tether(withGroup(arguments), timeout: timeout)
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

/// Processes still alive (not zombies) whose command line mentions `text`,
/// as "PID COMMAND LINE".
func liveProcesses(mentioning text: String) -> [String] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { entry -> String? in
        guard let pid = Int32(entry), pid != getpid(),
              let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let end = stat.lastIndex(of: ")"),
              let state = stat[stat.index(after: end)...].split(separator: " ").first, state != "Z", state != "X",
              let raw = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline")
        else { return nil }
        let command = String(decoding: raw.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
        return command.contains(text) ? "\(pid) \(command)" : nil
    }
}

extension TestGroup {
    /// The access and refresh tokens stored now (to look for in outputs).
    func storedTokens() throws -> (access: String, refresh: String) {
        let credentials = try String(contentsOfFile: credentialsPath, encoding: .utf8)
        return (String(try #require(credentials.firstMatch(of: /"accessToken":"([^"]+)"/)?.output.1)),
                String(try #require(credentials.firstMatch(of: /"refreshToken":"([^"]+)"/)?.output.1)))
    }

    /// Starts `count` `example-token-storm` processes, waits until each is
    /// ready, then releases them together; returns each one's JSON report.
    func storm(processes count: Int, tasks: Int, leeway: Double = 60) throws -> [[String: Any]] {
        let storms = try (0..<count).map { _ in
            try TestProcess(exampleExecutable("example-token-storm"), withGroup(["--tasks", String(tasks), "--leeway", String(leeway)]))
        }
        for storm in storms { try storm.expectLine("ready", timeout: 30) }
        for storm in storms { storm.writeStdin("go\n") }
        return try storms.map { storm in
            #expect(try storm.waitForExit(timeout: 60) == 0)
            let report = try storm.remainingOutput()
            return (try JSONSerialization.jsonObject(with: Data(report.utf8)) as? [String: Any]) ?? [:]
        }
    }
}
