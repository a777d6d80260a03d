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
        let store = try CredentialStore(group: directory)
        // Bad usage ends nothing: the transport rule is checked before the
        // session is touched. Allowed at login counts (it is stored).
        if let revokeURL {
            let allowedAtLogin = try store.snapshot().configuration?.allowsInsecureHTTP ?? false
            if let refusal = TokenEndpoint.transportRefusal(revokeURL, allowsInsecureHTTP: insecureHTTP || allowedAtLogin) {
                throw CLIError.badInput(refusal)
            }
        }
        // The local session ends first, under the refresh lock; the server is asked after, without it.
        let lock = try ExclusiveLock.acquire(path: try directory.preparedRefreshLockPath())
        let before = try store.snapshot()
        // A keyring's refresh token and client secret, read for the revocation
        // before they go (a locked keyring: the access token is revoked instead).
        let secrets = before.tokens(.user).flatMap { try? store.withRefreshToken($0, as: .user, configuration: before.configuration) }
        let (removed, stored) = try store.shared.update { values in
            (TokenSet(values.removeValue(forKey: TokenKind.user.rawValue)), AuthConfiguration(values["configuration"]))
        }
        if let keyring = store.keyring(before) { Login.clearing(keyring, .userRefreshToken) }
        lock.release()

        let state = try store.snapshot().state
        output(removed != nil ? "logged out: \(state.rawValue)" : "no user was logged in: \(state.rawValue)")
        if removed != nil {
            CommandLog.logger.event(.authSessionEnded, level: .notice, "logged out",
                                    ["kind": "user", "reason": "logout"])
        }
        guard let removed, let stored, let url = revokeURL ?? stored.revokeURL else { return }
        // A keyring's client secret, for the revocation's client authentication.
        var configuration = (try? store.withClientSecret(stored)) ?? stored
        // For this revocation only: the stored configuration keeps what login allowed.
        if insecureHTTP { configuration.allowsInsecureHTTP = true }
        let refreshToken = removed.refreshToken ?? (secrets?.refreshIdentity == removed.refreshIdentity ? secrets?.refreshToken : nil)
        let (token, hint) = refreshToken.map { ($0, "refresh_token") } ?? (removed.accessToken, "access_token")
        let timeout = revokeTimeout.value
        let revoking = configuration
        let outcome = try runAsync { http async -> TokenEndpointError? in
            let endpoint = TokenEndpoint(configuration: revoking, http: http)
            do throws(TokenEndpointError) {
                try await endpoint.revoke(token, hint: hint, at: url, timeout: timeout)
                return nil
            } catch {
                return error
            }
        }
        if let outcome {
            printError("warning: the server did not confirm the revocation (\(outcome)); the session ended here anyway")
        } else {
            output("revoked the \(hint == "refresh_token" ? "refresh" : "access") token at \(URLOrigin(url)?.description ?? url)")
        }
    }
}
