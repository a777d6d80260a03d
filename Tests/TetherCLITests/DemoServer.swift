import Foundation
import FoundationNetworking  // URLSession (Linux)
import TetherTestSupport

/// A demo auth server of the test's own, on a port the kernel picked, with
/// secrets in files of the test's temporary directory.
final class DemoServer: @unchecked Sendable {
    let process: TestProcess
    let port: Int
    let clientSecret = "client-secret-\(UUID().uuidString)"
    let password = "password-\(UUID().uuidString)"
    let bobPassword = "password-\(UUID().uuidString)"
    let secretFile: String
    var baseURL: String { "http://127.0.0.1:\(port)" }
    var tokenURL: String { baseURL + "/token" }

    init(in directory: TemporaryDirectory, accessTTL: Double = 3600, reuseGrace: Double = 0) throws {
        secretFile = directory.path + "/client-secret"
        try writeFile(secretFile, clientSecret + "\n", mode: 0o600)
        try writeFile(directory.path + "/users", "alice:\(password)\nbob:\(bobPassword)\n", mode: 0o600)
        process = try TestProcess(try NestedPackageBuild.demoAuthServer.path(), [
            "--access-ttl", String(accessTTL), "--reuse-grace", String(reuseGrace),
            "--client-secret-file", secretFile, "--users-file", directory.path + "/users",
        ])
        guard let line = try process.readLine(timeout: 30), line.hasPrefix("listening on "),
              let port = line.split(separator: ":").last.flatMap({ Int($0) })
        else { throw TestTimeout(what: "the demo auth server to listen") }
        self.port = port
    }

    /// `tether login` as alice, or bob (the password on stdin).
    func login(_ group: TestGroup, as user: String = "alice", extra: [String] = []) throws -> CommandResult {
        let login = try group.start(["login", "--token-url", tokenURL, "--client-id", "tether-demo",
                                     "--client-secret-file", secretFile, "--username", user, "--password-stdin"] + extra)
        login.writeStdin((user == "bob" ? bobPassword : password) + "\n")
        login.closeStdin()
        let status = try login.waitForExit(timeout: 30)
        return CommandResult(status: status, stdout: try login.remainingOutput(), stderr: try login.standardError())
    }

    /// Logs in with tokens that are already expired, then sets the TTL back,
    /// so the next token request is a refresh.
    func loginExpired(_ group: TestGroup, extra: [String] = []) throws {
        try post("/admin/settings", ["accessTTL": -5])
        let result = try login(group, extra: extra)
        try post("/admin/settings", ["accessTTL": 3600])
        guard result.status == 0 else { throw TestTimeout(what: "login: \(result.stderr)") }
    }

    func counters() throws -> [String: Int] {
        (try request("GET", "/counters", nil) as? [String: Int]) ?? [:]
    }

    @discardableResult
    func post(_ path: String, _ body: [String: Any]) throws -> Any {
        try request("POST", path, body)
    }

    /// A form POST, as a browser sends one (the device verification page).
    @discardableResult
    func postForm(_ path: String, _ fields: [String: String]) throws -> Any {
        try requestJSON("POST", baseURL + path, fields, form: true)
    }

    private func request(_ method: String, _ path: String, _ body: [String: Any]?) throws -> Any {
        try requestJSON(method, baseURL + path, body)
    }

    /// Every line the server printed so far (it prints no secrets).
    func waitForLine(_ expected: String) throws {
        try process.expectLine(expected, timeout: 20)
    }
}
