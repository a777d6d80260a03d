import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import TetherAuth
import TetherJSON

/// The demo auth server's counters and admin endpoints (`/counters`,
/// `/admin/settings`, `/admin/faults`), for the benchmarks and the demo.
struct AuthServerAdmin: Sendable {
    let baseURL: String

    func counters() throws -> [String: Int] {
        let value = try call("GET", "/counters", nil)
        guard case .object(let object) = value else { return [:] }
        return object.compactMapValues { $0.intValue }
    }

    func post(_ path: String, _ body: [String: JSONValue]) throws {
        _ = try call("POST", path, .object(body))
    }

    private func call(_ method: String, _ path: String, _ body: JSONValue?) throws -> JSONValue {
        let url = baseURL + path
        let headers = body == nil ? [] : [("Content-Type", "application/json")]
        let bytes = body.map { JSONCodec.serialize($0) }
        let response = try runAsync { () async throws -> HTTPExchange.Response in
            try await HTTPExchange.send(method, url, headers: headers, body: bytes, timeout: 10)
        }
        guard (200..<300).contains(response.status) else { throw CLIError.environment("\(path) answered HTTP \(response.status)") }
        return try JSONCodec.parse(response.body)
    }
}

/// The demo auth server's executable, built next to tether.
func demoAuthServerExecutable() -> String {
    URL(fileURLWithPath: ownExecutable()).deletingLastPathComponent().appendingPathComponent("demo-auth-server").path
}

/// Writes `text` to a new file only its owner can read (a secret).
func writeSecretFile(_ path: String, _ text: String) throws {
    guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
    else { throw CLIError.environment("cannot write \(path)") }
}
