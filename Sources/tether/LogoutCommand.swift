import ArgumentParser
import FoundationEssentials
import Logging
import TetherAuth
import TetherGroup
import TetherHTTP
import TetherLog
import TetherLoop

struct Logout: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logout",
        abstract: "End the user session in every process of the group; the client token is kept.",
        discussion: """
            Where a revocation endpoint is known (login's --revoke-url or discovery, or --revoke-url \
            here), the refresh token is then revoked at the server (RFC 7009), waiting at most \
            --revoke-timeout seconds. The local session ends whatever the server says; a failed \
            revocation is a warning (exit 0).
            --revoke-url follows login's transport rule: plain http:// to another machine is bad \
            usage (exit 2, and the session is not ended), unless --insecure-http is given here or \
            was at login.
            """)
    @Option(help: ArgumentHelp("Revoke the refresh token here (RFC 7009), overriding the stored endpoint.", valueName: "URL"))
    var revokeURL: String?
    @Option(help: ArgumentHelp("Seconds to wait for the revocation.", valueName: "S")) var revokeTimeout: Seconds = Seconds(5)
    @Flag(help: "Allow --revoke-url over plain http:// to a host other than this machine (the token travels in clear).")
    var insecureHTTP = false
    @OptionGroup var group: GroupOptions

    func validate() throws {
        if let revokeURL, URLOrigin(revokeURL) == nil { throw ValidationError("--revoke-url \(revokeURL) is not an http(s) URL") }
    }

    func run() throws {
        let directory = try group.open()
        let session = try AuthSession(group: directory)
        // Bad usage ends nothing: the transport rule is checked before the
        // session is touched. Allowed at login counts (it is stored).
        if let revokeURL {
            let allowedAtLogin = try session.store.snapshot().configuration?.allowsInsecureHTTP ?? false
            if let refusal = TokenEndpoint.transportRefusal(revokeURL, allowsInsecureHTTP: insecureHTTP || allowedAtLogin) {
                throw CLIError.badInput(refusal)
            }
        }
        // The local session ends first, under the refresh lock; the server is asked after, without it.
        let loggedOut: AuthSession.LoggedOut
        do { loggedOut = try session.logout(revokingAt: revokeURL, allowingInsecureHTTP: insecureHTTP) } catch { throw error.thrown }
        if let leftover = loggedOut.leftover { printError("warning: \(leftover)") }
        let state = loggedOut.state.rawValue
        output(loggedOut.endedUser ? "logged out: \(state)" : "no user was logged in: \(state)")
        if loggedOut.endedUser {
            CommandLog.logger.event(.authSessionEnded, level: .notice, "logged out",
                                    ["kind": "user", "reason": "logout"])
        }
        guard let revocation = loggedOut.revocation else { return }
        let timeout = revokeTimeout.value
        let outcome = try runAsync { http async -> TokenEndpointError? in
            do throws(TokenEndpointError) {
                try await session.revoke(revocation, timeout: timeout, http: http)
                return nil
            } catch {
                return error
            }
        }
        if let outcome {
            printError("warning: the server did not confirm the revocation (\(outcome)); the session ended here anyway")
        } else {
            let url = revocation.url
            output("revoked the \(revocation.hint == "refresh_token" ? "refresh" : "access") token at \(URLOrigin(url)?.description ?? url)")
        }
    }
}
