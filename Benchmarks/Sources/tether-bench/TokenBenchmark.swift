import FoundationEssentials
import Glibc
import TetherAuth
import TetherGroup
import TetherHTTP
import TetherIPC
import TetherLoop

/// tokens.cached: a valid token read from the broker, against one lstat().
/// tokens.cached.keyring: the same read in a group whose secrets are in the
/// keyring, against the file group's (the access token stays in the file,
/// so the keyring is never asked). tokens.keyring.lookup, where a Secret
/// Service answers: reading a refresh token from the keyring (what a
/// refresh does after taking the lock), against reading the credentials file.
/// tokens.storm: N processes × M tasks ask at once across an expiry, against
/// the demo auth server with added latency; the same storm without the
/// cross-process lock (in-process single flight only) and with no
/// coordination at all are its baselines. Counts come from the server.
struct TokenBenchmark {
    let scratch: BenchScratch, scale: Double
    static let processes = 4
    static let tasks = 32
    static let latencyMilliseconds = 50

    func run() throws -> [BenchResult] {
        [try cachedRead(), try cachedKeyringRead()] + (try keyringLookup().map { [$0] } ?? []) + [try storm()]
    }

    private func cachedRead() throws -> BenchResult {
        let group = try GroupDirectory(path: scratch.path + "/tokens-cached")
        let store = try CredentialStore(group: group)
        try store.save(AuthConfiguration(tokenURL: "http://127.0.0.1:9/token", clientID: "bench"))
        try store.save(TokenSet(accessToken: "bench-token", expiresAt: Date().timeIntervalSince1970 + 3600), as: .user)
        // A cached read makes no request: the client's loop never runs.
        let broker = try TokenBroker(group: group, http: HTTPClient(loop: try EventLoop()))
        let samples = max(1000, Int(100_000 * scale))
        let read = try measure(samples: samples) {
            guard case .valid = try broker.cached() else { throw BenchError.environment("the bench token was not valid") }
        }
        let path = store.shared.path
        var info = stat()
        let baseline = measure(samples: samples) { _ = lstat(path, &info) }
        return BenchResult(name: "tokens.cached", samples: read, baselines: ["one lstat()": Percentiles(nanoseconds: baseline)])
    }

    /// A broker over a group with a valid user token; `keyring`: its
    /// secrets said to be in the keyring (an ID in the refresh token's place).
    private func cachedBroker(_ name: String, keyring: Bool) throws -> TokenBroker {
        let group = try GroupDirectory(path: scratch.path + "/" + name)
        let store = try CredentialStore(group: group)
        try store.save(AuthConfiguration(tokenURL: "http://127.0.0.1:9/token", clientID: "bench"))
        var set = TokenSet(accessToken: "bench-token", expiresAt: Date().timeIntervalSince1970 + 3600)
        if keyring {
            set.refreshTokenID = "0123456789abcdef"
            try store.shared.update { $0["secretStore"] = "keyring" }
        } else {
            set.refreshToken = "bench-refresh"
        }
        try store.save(set, as: .user)
        return try TokenBroker(group: group, http: HTTPClient(loop: try EventLoop()))
    }

    private func cachedKeyringRead() throws -> BenchResult {
        let samples = max(1000, Int(100_000 * scale))
        let file = try cachedBroker("tokens-cached-file", keyring: false)
        let keyring = try cachedBroker("tokens-cached-keyring", keyring: true)
        var fileSamples: [UInt64] = [], keyringSamples: [UInt64] = []
        // Interleaved, so both see the same machine.
        for _ in 0..<10 {
            keyringSamples += try measure(samples: samples / 10) { _ = try keyring.cached() }
            fileSamples += try measure(samples: samples / 10) { _ = try file.cached() }
        }
        return BenchResult(name: "tokens.cached.keyring", samples: keyringSamples,
                           baselines: ["the same read, secrets in the file": Percentiles(nanoseconds: fileSamples)])
    }

    /// nil (and a line saying why) where no Secret Service answers.
    private func keyringLookup() throws -> BenchResult? {
        if let why = Keyring.unavailability() {
            var line = "tokens.keyring.lookup skipped: no keyring answers (\(why))\n"
            _ = line.withUTF8 { write(2, $0.baseAddress, $0.count) }
            return nil
        }
        let group = try GroupDirectory(path: scratch.path + "/tokens-keyring")
        let keyring = Keyring(group: "bench-" + String(UInt64.random(in: 0...UInt64.max), radix: 16), place: group.path)
        do { try keyring.store("bench-refresh-token", as: .userRefreshToken, account: "bench") } catch {
            throw BenchError.environment("the keyring refused the benchmark's item: \(error)")
        }
        defer { _ = try? keyring.clear() }
        let store = try CredentialStore(group: group)
        try store.save(TokenSet(accessToken: "bench-token", refreshToken: "bench-refresh-token"), as: .user)
        let samples = max(50, Int(2_000 * scale))
        let lookups = try measure(samples: samples, warmup: 10) {
            guard try keyring.lookup(.userRefreshToken, account: "bench") != nil else { throw BenchError.environment("the item went") }
        }
        let path = store.shared.path
        let reads = try measure(samples: samples) { _ = try AtomicFile.read(path) }
        return BenchResult(name: "tokens.keyring.lookup", samples: lookups,
                           baselines: ["reading the credentials file": Percentiles(nanoseconds: reads)])
    }

    private func storm() throws -> BenchResult {
        let server = try BenchAuthServer(scratch: scratch)
        var waits: [String: [Double]] = [:]
        var counts: [String: [String: Int]] = [:]
        let own = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let stormer = directoryName(own) + "/tether-bench-storm"
        guard access(stormer, X_OK) == 0 else {
            throw BenchError.environment("\(stormer) is missing: build it as this benchmark was "
                                         + "(swift build -c release --product tether-bench-storm)")
        }
        for coordination in ["full", "in-process", "none"] {
            let group = try GroupDirectory(path: scratch.path + "/tokens-storm-\(coordination)")
            try server.loginExpired(group)
            try server.post("/admin/faults", ["latencyMs": .integer(Self.latencyMilliseconds), "latencyCount": 1_000])
            let before = try server.counters()
            let storms = try (0..<Self.processes).map { _ in
                try BenchProcess([stormer, "--tasks", String(Self.tasks), "--coordination", coordination, "--group", group.path],
                                 writableStdin: true)
            }
            for storm in storms { _ = try storm.readUntil { $0 == "ready" } }
            for storm in storms { storm.send("go") }
            var all: [Double] = []
            for storm in storms {
                let report = try JSONCodec.parse(Array(try storm.readLine(timeoutMilliseconds: 60_000).utf8))
                all += report["waitsMs"]?.arrayValue?.compactMap(\.doubleValue) ?? []
                _ = try storm.wait()
            }
            try server.post("/admin/faults", [:])
            let after = try server.counters()
            waits[coordination] = all
            counts[coordination == "full" ? "tether" : coordination] = [
                "refreshes": (after["refreshes"] ?? 0) - (before["refreshes"] ?? 0),
                "refreshRequests": (after["tokenRequests"] ?? 0) - (before["tokenRequests"] ?? 0),
                "reuseDetected": (after["reuseDetected"] ?? 0) - (before["reuseDetected"] ?? 0),
            ]
        }
        func stats(_ values: [Double]) -> Percentiles {
            Percentiles(nanoseconds: values.map { UInt64($0 * 1e6) })
        }
        let tether = stats(waits["full"] ?? [])
        return BenchResult(
            name: "tokens.storm", unit: "ms", p50: tether.p50 / 1000, p99: tether.p99 / 1000,
            samples: waits["full"]?.count ?? 0,
            baselines: ["in-process single flight": stats(waits["in-process"] ?? []).scaled(by: 1e-3),
                        "no coordination": stats(waits["none"] ?? []).scaled(by: 1e-3)],
            counts: counts)
    }
}

/// The demo auth server, for the token benchmarks.
final class BenchAuthServer {
    let process: BenchProcess
    let baseURL: String
    let secretFile: String
    let password = "bench-\(UUID().uuidString)"

    init(scratch: BenchScratch) throws {
        guard let executable = scratch.tools.authServer else {
            throw BenchError.environment("the token benchmarks need demo-auth-server (swift build --package-path "
                                         + "examples/DemoAuthServer): next to tether, on PATH, or --auth-server PATH")
        }
        secretFile = scratch.path + "/client-secret"
        let users = scratch.path + "/users"
        try writeSecretFile(secretFile, "bench-\(UUID().uuidString)\n")
        try writeSecretFile(users, "alice:\(password)\n")
        process = try BenchProcess([executable, "--client-secret-file", secretFile, "--users-file", users])
        let line = try process.readLine(timeoutMilliseconds: 30_000)
        guard line.hasPrefix("listening on ") else { throw BenchError.environment("demo-auth-server did not start: \(line)") }
        baseURL = String(line.dropFirst("listening on ".count))
    }

    /// Logs in as alice with tokens that are already expired, in-process.
    func loginExpired(_ group: GroupDirectory) throws {
        try post("/admin/settings", ["accessTTL": -5])
        let secret = String(decoding: FileManager.default.contents(atPath: secretFile) ?? Data(), as: UTF8.self)
            .trimmed
        let configuration = AuthConfiguration(tokenURL: baseURL + "/token", clientID: "tether-demo", clientSecret: secret)
        let password = password
        let set = try HTTPClient.withLoop { http async throws -> TokenSet in
            do throws(TokenEndpointError) {
                return try await TokenEndpoint(configuration: configuration, http: http).request(.password(username: "alice", password: password))
            } catch {
                throw BenchError.environment("cannot log in to the demo auth server: \(error)")
            }
        }
        let store = try CredentialStore(group: group)
        try store.save(configuration)
        try store.save(set, as: .user)
        try post("/admin/settings", ["accessTTL": 3600])
    }

    /// What clients did, by the server's count.
    func counters() throws -> [String: Int] {
        guard case .object(let object) = try call("GET", "/counters", nil) else { return [:] }
        return object.compactMapValues { $0.intValue }
    }

    func post(_ path: String, _ body: [String: JSONValue]) throws {
        _ = try call("POST", path, .object(body))
    }

    private func call(_ method: String, _ path: String, _ body: JSONValue?) throws -> JSONValue {
        let url = baseURL + path
        let response = try HTTPClient.withLoop { http in
            try await http.send(method, url, headers: body == nil ? [] : [("Content-Type", "application/json")],
                                body: body.map { JSONCodec.serialize($0) }, timeout: 10)
        }
        guard (200..<300).contains(response.status) else { throw BenchError.environment("\(path) answered HTTP \(response.status)") }
        return try JSONCodec.parse(response.body)
    }
}
