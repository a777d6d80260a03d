import TetherJSON
import ArgumentParser
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import TetherAuth
import TetherGroup
import TetherIPC
import TetherLoop

struct Token: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Show the auth state, or print a valid access token.",
        subcommands: [Status.self, Print.self]
    )

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "status",
                                                        abstract: "Show who is logged in and when the tokens expire (never the tokens).")
        @OptionGroup var group: GroupOptions
        @Flag(help: "Print one JSON object: {state, secretStore, style, tokenURL, refreshURL, deviceURL, revokeURL, issuer, clientID, apiOrigins, user, client}.") var json = false

        func run() throws {
            let snapshot = try CredentialStore(group: try group.open()).snapshot()
            let now = WallClock.now()
            func describe(_ set: TokenSet?) -> JSONValue {
                guard let set else { return .null }
                var object: [String: JSONValue] = ["refreshable": .bool(set.isRefreshable)]
                if let expiry = set.expiry {
                    object["expiry"] = .number(expiry)
                    object["expiresAt"] = WallClock.iso8601(seconds: expiry.doubleValue).map { .string($0) } ?? .null
                    object["expiresIn"] = .double((expiry.doubleValue - now).rounded())
                }
                if let subject = set.subject { object["subject"] = .string(subject) }
                return .object(object)
            }
            var report: [String: JSONValue] = [
                "state": .string(snapshot.state.rawValue),
                "secretStore": .string(snapshot.secretLocation.rawValue),
                "user": describe(snapshot.tokens(.user)),
                "client": describe(snapshot.tokens(.client)),
            ]
            if let configuration = snapshot.configuration {
                report["style"] = .string(configuration.style.rawValue)
                report["tokenURL"] = .string(configuration.tokenURL)
                report["refreshURL"] = .string(configuration.refreshEndpoint)
                report["clientID"] = .string(configuration.clientID)
                report["apiOrigins"] = .array(configuration.allowedOrigins.map { .string($0.description) })
                if configuration.allowsInsecureHTTP { report["insecureHTTP"] = .bool(true) }
                if let issuer = configuration.issuer { report["issuer"] = .string(issuer) }
                if let device = configuration.deviceURL { report["deviceURL"] = .string(device) }
                if let revoke = configuration.revokeURL { report["revokeURL"] = .string(revoke) }
            }
            if json { return output(JSONValue.object(report).description) }
            output("state: \(snapshot.state.rawValue)")
            if let configuration = snapshot.configuration {
                let client = configuration.clientID.isEmpty ? "" : " (client \(configuration.clientID))"
                output(PrintableText.escaped("token endpoint: \(configuration.tokenURL), \(configuration.style.rawValue) style\(client)"))
                if configuration.refreshEndpoint != configuration.tokenURL {
                    output(PrintableText.escaped("refresh endpoint: \(configuration.refreshEndpoint)"))
                }
                if let issuer = configuration.issuer { output(PrintableText.escaped("discovered from: \(issuer)")) }
                if let device = configuration.deviceURL { output(PrintableText.escaped("device login endpoint: \(device)")) }
                if let revoke = configuration.revokeURL { output(PrintableText.escaped("revocation endpoint: \(revoke)")) }
                output("access token sent to: \(configuration.allowedOrigins.map(\.description).joined(separator: ", "))")
                output(snapshot.secretLocation == .keyring
                       ? "secrets kept in: the keyring (Secret Service); the access tokens in the group's credentials file"
                       : "secrets kept in: the group's credentials file")
            }
            for kind in [TokenKind.user, .client] {
                guard let set = snapshot.tokens(kind) else { continue }
                let who = set.displaySubject.map { " for \($0)" } ?? ""
                let expiry = set.expiry.map { expiry in
                    let at = expiry.doubleValue
                    let when = WallClock.iso8601(seconds: at) ?? "at \(expiry) s since 1970"
                    return at > now ? "expires in \(wholeSeconds(at - now)) s (\(when))" : "expired \(wholeSeconds(now - at)) s ago"
                } ?? "no expiry known"
                output("\(kind.rawValue) token\(who): \(expiry)\(set.isRefreshable ? ", refreshable" : "")")
            }
        }
    }

    struct Print: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "print",
            abstract: "Print a valid access token and nothing else, refreshing it first if needed.",
            discussion: "One refresh serves every process that asks at the same time; see the README.")
        @Option(help: ArgumentHelp("Which token: user or client (default: the user's if logged in).", valueName: "KIND"))
        var kind: TokenKind?
        @Option(help: ArgumentHelp("Renew this many seconds before expiry.", valueName: "SECONDS")) var leeway: Double = 60
        @OptionGroup var group: GroupOptions

        func run() throws {
            let directory = try group.open()
            let (kind, leeway) = (kind, leeway)
            let (token, saved) = try runAsync { http async throws -> (String, Bool) in
                let broker = try TokenBroker(group: directory, http: http, leeway: leeway, logger: CommandLog.logger,
                                             onWarning: { printError("warning: \($0)") })
                do throws(AuthError) {
                    let token = try await broker.accessToken(kind)
                    return (token, await broker.saveUnsavedOffLoop())
                } catch {
                    throw CLIError(error)
                }
            }
            output(token)
            if !saved {
                printError("warning: the new tokens could not be saved and end with this process; "
                           + "the next refresh may be refused and need a new login")
            }
        }
    }
}

extension TokenKind: ExpressibleByArgument {}

/// A duration in whole seconds for people; never traps, however large.
func wholeSeconds(_ seconds: Double) -> String { JSONNumber(seconds.rounded()).description }
