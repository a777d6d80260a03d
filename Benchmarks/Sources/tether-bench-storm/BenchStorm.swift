import Synchronization
import TetherAuth
import TetherGroup
import TetherHTTP
import TetherJSON
import TetherLoop
import Glibc

/// tether-bench-storm --group DIR [--tasks N] [--coordination full|in-process|none]
///
/// The token storm with its baselines: `full` is Tether (`TokenBroker`);
/// `in-process` refreshes with one flight per process and no lock across
/// processes; `none` lets every task refresh on its own, as uncoordinated
/// clients do. The baselines are written here, with the package's
/// `TokenEndpoint` and `CredentialStore`: Tether offers no way to refresh
/// uncoordinated. Prints "ready", waits for a line on stdin, then
/// {"tokens": [fingerprints], "waitsMs": [...]}.
@main enum BenchStorm {
    enum Coordination: String, Sendable { case full, inProcess = "in-process", none }

    struct NotLoggedIn: Error, CustomStringConvertible {
        var description: String { "the group has no tokens: log in first" }
    }

    static let leeway = 60.0

    static func main() {
        signal(SIGPIPE, SIG_IGN)  // a reader that went away loses the report, nothing more
        guard let path = value(of: "--group"), let tasks = Int(value(of: "--tasks") ?? "32"), tasks > 0,
              let coordination = Coordination(rawValue: value(of: "--coordination") ?? "full"),
              let group = try? GroupDirectory(path: path, create: false) else {
            say("usage: tether-bench-storm --group DIR [--tasks N] [--coordination full|in-process|none]", to: 2)
            exit(2)
        }
        say("ready")
        _ = readLine()
        do {
            let results = try HTTPClient.withLoop { http async throws -> [(String, Double)] in
                let store = try CredentialStore(group: group)
                let broker = coordination == .full ? try TokenBroker(group: group, http: http, leeway: leeway) : nil
                let flight = SingleFlight()
                // A task group: its tasks keep the loop's executor preference.
                return await withTaskGroup(of: (String, Double).self) { askers in
                    for _ in 0..<tasks {
                        askers.addTask { await timed { () async throws -> String in
                            switch coordination {
                            case .full: try await broker?.accessToken() ?? ""
                            case .inProcess: try await flight.token(store, http)
                            case .none: try await refreshUncoordinated(store, http)
                            }
                        } }
                    }
                    return await askers.reduce(into: []) { $0.append($1) }
                }
            }
            let tokens = Set(results.map(\.0)).sorted(), waits = results.map(\.1).sorted()
            say(JSONValue.object(["tokens": .array(tokens.map { .string($0) }), "waitsMs": .array(waits.map { .double($0) })]).description)
        } catch {
            say("tether-bench-storm: \(error)", to: 2)
            exit(3)
        }
    }

    /// What one asker got (a fingerprint, or the error) and how long it waited, in ms.
    @Sendable static func timed(_ ask: () async throws -> String) async -> (String, Double) {
        let start = MonotonicClock.nanoseconds()
        let outcome: String
        do { outcome = fingerprint(try await ask()) } catch { outcome = "error: \(error)" }
        return (outcome, Double(MonotonicClock.nanoseconds() - start) / 1e6)
    }

    /// A refresh with what this task read, saved over whatever is stored:
    /// no lock, no re-read, no retry.
    @Sendable static func refreshUncoordinated(_ store: CredentialStore, _ http: HTTPClient) async throws -> String {
        let snapshot = try store.snapshot()
        guard let configuration = snapshot.configuration, let kind = snapshot.preferredKind,
              let current = snapshot.tokens(kind) else { throw NotLoggedIn() }
        guard current.needsRefresh(now: WallClock.now(), leeway: leeway) else { return current.accessToken }
        let grant: TokenEndpoint.Grant = current.refreshToken.map { .refreshToken($0) } ?? .clientCredentials
        var (fresh, _) = try await TokenEndpoint(configuration: configuration, http: http).answer(grant)
        if fresh.refreshToken == nil { fresh.refreshToken = current.refreshToken }
        try store.save(fresh, as: kind)
        return fresh.accessToken
    }

    /// One refresh in flight in this process; the others wait for it.
    final class SingleFlight: Sendable {
        private let flight = Mutex<Task<String, any Error>?>(nil)

        func token(_ store: CredentialStore, _ http: HTTPClient) async throws -> String {
            if let snapshot = try? store.snapshot(), let kind = snapshot.preferredKind, let current = snapshot.tokens(kind),
               !current.needsRefresh(now: WallClock.now(), leeway: leeway) {
                return current.accessToken
            }
            let task = flight.withLock { running in
                if let running { return running }
                let task = Task { () async throws -> String in
                    defer { self.flight.withLock { $0 = nil } }
                    return try await refreshUncoordinated(store, http)
                }
                running = task
                return task
            }
            return try await task.value
        }
    }

    static func value(of flag: String) -> String? {
        let arguments = CommandLine.arguments
        guard let index = arguments.firstIndex(of: flag), index + 1 < arguments.count else { return nil }
        return arguments[index + 1]
    }

    /// A line, unbuffered (the benchmark waits for "ready").
    static func say(_ line: String, to descriptor: Int32 = 1) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }

    @Sendable static func fingerprint(_ token: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in token.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return String(hash, radix: 16)
    }
}
