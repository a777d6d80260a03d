import Foundation
import Testing
import TetherTestSupport

/// A private group directory for one test, and the paths Tether uses in it.
struct TestGroup {
    let dir: TemporaryDirectory
    var path: String { dir.group }
    /// What every tether this group runs gets: by default no session bus
    /// and no ibus-daemon, so no test touches the keyring or the input
    /// method of whoever runs the tests; a keyring or desktop test gives
    /// its own (`SecretService.environment`, `InputMethodSession.environment`).
    var environment = ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/tether-tests",
                       "IBUS_ADDRESS": "unix:path=/nonexistent/tether-tests"]

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
        try tether(withGroup(arguments), environment: environment, timeout: timeout)
    }

    func start(_ arguments: [String]) throws -> TestProcess {
        try startTether(withGroup(arguments), environment: environment)
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

    /// Three storms of sixteen processes (4 tasks each, leeway 0), each once
    /// the previous round's token has expired (tokens that live seconds):
    /// each round gets one new token, and `refreshes()` (the server's
    /// count) is the round's number after it. `afterEach` runs after each.
    func stormsAcrossThreeExpiries(refreshes: () throws -> Int?, afterEach: (Int) throws -> Void = { _ in }) throws {
        var seen: Set<String> = []
        for round in 1...3 {
            if round > 1 {
                try waitFor("round \(round)'s token to expire", timeout: 15) {
                    let user = (try? json(try run(["token", "status", "--json"])))?["user"] as? [String: Any]
                    return (user?["expiresIn"] as? Double ?? 1) <= -1
                }
            }
            let reports = try storm(processes: 16, tasks: 4, leeway: 0)
            let tokens = Set(reports.flatMap { $0["tokens"] as? [String] ?? [] })
            #expect(tokens.count == 1 && !tokens.contains { $0.hasPrefix("error") }, "round \(round): \(tokens)")
            #expect(seen.isDisjoint(with: tokens), "round \(round) got a new token")
            seen.formUnion(tokens)
            #expect(try refreshes() == round)
            try afterEach(round)
        }
    }

    /// Starts `count` `example-token-storm` processes, waits until each is
    /// ready, then releases them together; returns each one's JSON report.
    func storm(processes count: Int, tasks: Int, leeway: Double = 60) throws -> [[String: Any]] {
        let storms = try (0..<count).map { _ in
            try TestProcess(exampleExecutable("example-token-storm"), withGroup(["--tasks", String(tasks), "--leeway", String(leeway)]),
                            environment: environment)
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
