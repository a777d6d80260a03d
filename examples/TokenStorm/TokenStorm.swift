import TetherAuth
import TetherGroup
import TetherHTTP
import TetherJSON
import TetherLog
import TetherLoop
#if canImport(Glibc)
import Glibc
#endif

/// example-token-storm --group DIR [--tasks N] [--leeway SECONDS]
///
/// Many tasks of one process ask for an access token at once, as a busy
/// app's requests do: prints "ready", waits for a line on stdin (so several
/// processes can be let go together), then prints one JSON object:
/// {"tokens": [fingerprints of the tokens they got], "waitsMs": [...]}.
/// Each process, and every process of the group, refreshes at most once
/// per expiry. Never prints a token. With TETHER_LOG_LEVEL=info its
/// `auth.refresh.*` events go to standard error.
@main enum TokenStorm {
    static func main() {
        // A reader that went away loses the report; it does not kill the storm mid-refresh.
        signal(SIGPIPE, SIG_IGN)
        guard let path = value(of: "--group") ?? ProcessEnvironment.value("TETHER_GROUP") else {
            fail("usage: example-token-storm --group DIR [--tasks N] [--leeway SECONDS]", code: 2)
        }
        guard let tasks = Int(value(of: "--tasks") ?? "32"), (1...10_000).contains(tasks),
              let leeway = Double(value(of: "--leeway") ?? "60"), leeway.isFinite, leeway >= 0 else {
            fail("--tasks must be 1 to 10000 and --leeway a number of seconds", code: 2)
        }
        let group: GroupDirectory
        do { group = try GroupDirectory(path: path, create: false) } catch { fail("\(error)", code: 3) }
        say("ready")
        _ = readLine()
        do {
            let results = try HTTPClient.withLoop { http async throws -> [(String, Double)] in
                let broker = try TokenBroker(group: group, http: http, leeway: leeway, logger: .command(label: "example-token-storm"))
                return await withTaskGroup(of: (String, Double).self) { taskGroup in
                    for _ in 0..<tasks {
                        taskGroup.addTask {
                            let start = MonotonicClock.nanoseconds()
                            let outcome: String
                            do { outcome = fingerprint(try await broker.accessToken()) } catch { outcome = "error: \(error)" }
                            return (outcome, Double(MonotonicClock.nanoseconds() - start) / 1e6)
                        }
                    }
                    var all: [(String, Double)] = []
                    for await result in taskGroup { all.append(result) }
                    return all
                }
            }
            let report: JSONValue = .object([
                "tokens": .array(Set(results.map(\.0)).sorted().map { .string($0) }),
                "waitsMs": .array(results.map(\.1).sorted().map { .double($0) }),
            ])
            say(report.description)
        } catch {
            fail("\(error)", code: 3)
        }
    }

    static func value(of flag: String) -> String? {
        let arguments = CommandLine.arguments
        guard let index = arguments.firstIndex(of: flag), index + 1 < arguments.count else { return nil }
        return arguments[index + 1]
    }

    /// A line on standard output, unbuffered (a test waits for "ready").
    static func say(_ line: String) { LogOutput.standardOutput.write(line) }

    static func fail(_ message: String, code: Int32) -> Never {
        LogOutput.standardError.write("example-token-storm: \(message)")
        exit(code)
    }

    /// FNV-1a: enough to tell tokens apart without showing one.
    @Sendable static func fingerprint(_ token: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in token.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return String(hash, radix: 16)
    }
}
