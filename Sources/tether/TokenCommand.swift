import ArgumentParser
import Foundation
import TetherAuth
import TetherGroup
import TetherIPC
import TetherLoop

struct Token: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the auth state, or print a valid access token.",
        subcommands: [Status.self, Print.self, Storm.self, UpsertStress.self]
    )

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show who is logged in and when the tokens expire (never the tokens).")
        @OptionGroup var group: GroupOptions
        @Flag(help: "Print one JSON object: {state, tokenURL, clientID, user, client}.") var json = false

        func run() throws {
            let snapshot = try CredentialStore(group: try group.open()).snapshot()
            let now = Date().timeIntervalSince1970
            func describe(_ set: TokenSet?) -> JSONValue {
                guard let set else { return .null }
                var object: [String: JSONValue] = ["refreshable": .bool(set.refreshToken != nil)]
                if let expiresAt = set.expiresAt {
                    object["expiresAt"] = .string(iso8601(expiresAt))
                    object["expiresIn"] = .number((expiresAt - now).rounded())
                }
                if let subject = set.subject { object["subject"] = .string(subject) }
                return .object(object)
            }
            var report: [String: JSONValue] = [
                "state": .string(snapshot.state.rawValue),
                "user": describe(snapshot.tokens(.user)),
                "client": describe(snapshot.tokens(.client)),
            ]
            if let configuration = snapshot.configuration {
                report["tokenURL"] = .string(configuration.tokenURL)
                report["clientID"] = .string(configuration.clientID)
            }
            if json { return output(compactJSON(.object(report))) }
            output("state: \(snapshot.state.rawValue)")
            if let configuration = snapshot.configuration {
                output("token endpoint: \(configuration.tokenURL) (client \(configuration.clientID))")
            }
            for kind in [TokenKind.user, .client] {
                guard let set = snapshot.tokens(kind) else { continue }
                let who = set.subject.map { " for \($0)" } ?? ""
                let expiry = set.expiresAt.map { at in
                    at > now ? "expires in \(Int((at - now).rounded())) s (\(iso8601(at)))" : "expired \(Int((now - at).rounded())) s ago"
                } ?? "no expiry known"
                output("\(kind.rawValue) token\(who): \(expiry)\(set.refreshToken == nil ? "" : ", refreshable")")
            }
        }
    }

    struct Print: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a valid access token and nothing else, refreshing it first if needed.",
            discussion: "One refresh serves every process that asks at the same time; see the README.")
        @Option(help: ArgumentHelp("Which token: user or client (default: the user's if logged in).", valueName: "KIND"))
        var kind: TokenKind?
        @Option(help: ArgumentHelp("Renew this many seconds before expiry.", valueName: "SECONDS")) var leeway: Double = 60
        @OptionGroup var group: GroupOptions

        func run() throws {
            let broker = try TokenBroker(group: try group.open(), leeway: leeway,
                                         onWarning: { printError("warning: \($0)") })
            let kind = kind
            let token = try runAsync { () async throws -> String in
                do throws(AuthError) { return try await broker.accessToken(kind) } catch { throw CLIError(error) }
            }
            output(token)
            if !broker.saveUnsaved() {
                printError("warning: the new tokens could not be saved and end with this process; "
                           + "the next refresh may be refused and need a new login")
            }
        }
    }

    /// For benchmarks and tests: M tasks of this process ask for a token at
    /// once, after a line on stdin says go. Prints fingerprints, never tokens.
    struct Storm: ParsableCommand {
        static let configuration = CommandConfiguration(shouldDisplay: false)
        @Option var tasks = 32
        @Option var coordination: Coordination = .full
        @Option var leeway: Double = 60
        @OptionGroup var group: GroupOptions

        func run() throws {
            let broker = try TokenBroker(group: try group.open(), leeway: leeway, coordination: coordination)
            output("ready")
            _ = readLine()
            let tasks = tasks
            let results = try runAsync { () async -> [(String, Double)] in
                await withTaskGroup(of: (String, Double).self) { taskGroup in
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
            let waits = results.map(\.1).sorted()
            output(compactJSON([
                "tokens": .array(Array(Set(results.map(\.0))).sorted().map { .string($0) }),
                "waitsMs": .array(waits.map { .number($0) }),
            ]))
        }
    }

    /// For tests: COUNT atomic upserts into the credential store, after a
    /// line on stdin says go; prints "wrote N" after each.
    struct UpsertStress: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "upsert-stress", shouldDisplay: false)
        @Option var prefix: String
        @Option var count = 250
        @OptionGroup var group: GroupOptions

        func run() throws {
            let store = try CredentialStore(group: try group.open())
            output("ready")
            _ = readLine()
            for index in 0..<count {
                let key = "stress.\(prefix).\(index)"
                try store.shared.update { $0[key] = TokenSet(accessToken: "value-\(prefix)-\(index)").jsonValue }
                output("wrote \(index + 1)")
            }
        }
    }
}

extension TokenKind: ExpressibleByArgument {}
extension Coordination: ExpressibleByArgument {}

/// A token's FNV-1a hash: enough to tell tokens apart without showing one.
func fingerprint(_ token: String) -> String {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in token.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
    return String(hash, radix: 16)
}

func iso8601(_ seconds: Double) -> String {
    let formatter = ISO8601DateFormatter()
    return formatter.string(from: Date(timeIntervalSince1970: seconds))
}
