import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import TetherAuth
import TetherHTTP
import TetherJSON
import TetherLoop
import SystemPackage

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
        let response: HTTPResponse
        do {
            response = try HTTPClient.withLoop { http async throws -> HTTPResponse in
                try await http.send(method, url, headers: headers, body: bytes, timeout: 10)
            }
        } catch let error as Errno {
            throw DemoError("cannot start the event loop: \(error)")
        }
        guard (200..<300).contains(response.status) else { throw DemoError("\(path) answered HTTP \(response.status)") }
        return try JSONCodec.parse(response.body)
    }
}

/// The demo auth server's executable: `explicit`, else next to tether (an
/// install puts it there), else on PATH. It is a package of its own
/// (examples/DemoAuthServer), so nothing heavy is in Tether's graph.
package func demoAuthServerExecutable(_ explicit: String? = nil, besides tether: String) throws -> String {
    if let explicit {
        guard FileManager.default.isExecutableFile(atPath: explicit) else {
            throw DemoError("--auth-server \(explicit) is not an executable", badInput: true)
        }
        return explicit
    }
    guard let found = ExecutableSearch.find("demo-auth-server", besides: tether) else {
        throw DemoError("the demo auth server is not built: run examples/demo.sh, or "
            + "swift build --package-path examples/DemoAuthServer and pass --auth-server "
            + "examples/DemoAuthServer/.build/debug/demo-auth-server")
    }
    return found
}

/// Writes `text` to a new file only its owner can read (a secret).
func writeSecretFile(_ path: String, _ text: String) throws {
    guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
    else { throw DemoError("cannot write \(path)") }
}
