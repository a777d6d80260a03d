import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
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
        guard let url = URL(string: baseURL + path) else { throw CLIError.environment("bad URL \(baseURL + path)") }
        var request = URLRequest(url: url, timeoutInterval: 10)
        request.httpMethod = method
        if let body {
            request.httpBody = Data(JSONCodec.serialize(body))
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let prepared = request
        let data = try runAsync { () async throws -> Data in try await URLSession.shared.data(for: prepared).0 }
        return try JSONCodec.parse([UInt8](data))
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
