import TetherGroup
import TetherHTTP

/// Ending the user session by choice: here first, then at the server.
extension AuthSession {
    /// What a logout did, and what the server may be asked to revoke.
    package struct LoggedOut: Sendable {
        /// False when no user was logged in.
        package let endedUser: Bool
        /// The group's auth state after it (the client token stays).
        package let state: AuthState
        /// The user's refresh token, where the keyring kept it.
        package let leftover: KeyringLeftover?
        /// The ended session's token to revoke, when a revocation endpoint is known.
        package let revocation: Revocation?
    }

    /// A token to revoke (RFC 7009), where, and as which client.
    package struct Revocation: Sendable {
        package let url: String
        /// The refresh token (revoking it revokes its grant) where it could
        /// be read, else the access token.
        package let token: String
        /// RFC 7009's `token_type_hint`: `refresh_token` or `access_token`.
        package let hint: String
        /// The stored configuration (its client secret, if kept in the keyring, is read at `revoke`).
        package let configuration: AuthConfiguration
    }

    /// Ends the user session in every process of the group: under the
    /// refresh lock, the user's token set goes from the store and its
    /// refresh token from the keyring; the client token stays. The server is
    /// not asked here: `revocation` names the token to revoke at `url`
    /// (nil: the endpoint stored at login), without the lock.
    /// `allowingInsecureHTTP` allows plain http for that revocation only.
    package func logout(revokingAt url: String? = nil, allowingInsecureHTTP: Bool = false) throws(AuthError) -> LoggedOut {
        let (removed, stored, read, leftover) = try withRefreshLock {
            () throws(AuthError) -> (TokenSet?, AuthConfiguration?, TokenSet?, KeyringLeftover?) in
            let before = try snapshot()
            // A keyring's refresh token, read for the revocation before it
            // goes (a locked keyring: the access token is revoked instead).
            let read = before.tokens(.user).flatMap { try? store.withRefreshToken($0, as: .user, configuration: before.configuration) }
            let removed: (TokenSet?, AuthConfiguration?)
            do throws(GroupError) {
                removed = try store.shared.update { values in
                    (TokenSet(values.removeValue(forKey: TokenKind.user.rawValue)), AuthConfiguration(values[CredentialStore.configurationKey]))
                }
            } catch {
                throw .store(error)
            }
            let leftover = store.keyring(before).flatMap { Self.clearing(.userRefreshToken, from: $0) }
            return (removed.0, removed.1, read, leftover)
        }
        let state = try snapshot().state
        guard let removed, var configuration = stored, let url = url ?? configuration.revokeURL else {
            return LoggedOut(endedUser: removed != nil, state: state, leftover: leftover, revocation: nil)
        }
        // For this revocation only: the stored configuration keeps what login allowed.
        if allowingInsecureHTTP { configuration.allowsInsecureHTTP = true }
        let refreshToken = removed.refreshToken ?? (read?.refreshIdentity == removed.refreshIdentity ? read?.refreshToken : nil)
        let (token, hint) = refreshToken.map { ($0, "refresh_token") } ?? (removed.accessToken, "access_token")
        return LoggedOut(endedUser: true, state: state, leftover: leftover,
                         revocation: Revocation(url: url, token: token, hint: hint, configuration: configuration))
    }

    /// Asks the server to revoke a logout's token, waiting at most `timeout`
    /// seconds. The session has ended here whatever it answers.
    package nonisolated(nonsending) func revoke(_ revocation: Revocation, timeout: Double,
                                               http: HTTPClient) async throws(TokenEndpointError) {
        var configuration = revocation.configuration
        if configuration.clientSecretInKeyring {
            // A keyring's client secret, for the client authentication: read off the loop.
            let store = store, stored = configuration
            configuration = (try? await TokenBroker.offLoop { () throws(AuthError) in try store.withClientSecret(stored) }) ?? stored
        }
        let endpoint = TokenEndpoint(configuration: configuration, http: http)
        try await endpoint.revoke(revocation.token, hint: revocation.hint, at: revocation.url, timeout: timeout)
    }
}
