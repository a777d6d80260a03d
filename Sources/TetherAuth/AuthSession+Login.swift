import TetherGroup

/// Saving a login, and the rule for another user: one user never sees
/// another's data.
extension AuthSession {
    /// What a login changed besides its own tokens.
    package struct SavedLogin: Sendable {
        /// Set when the user is not the one before (or cannot be told apart).
        package let userChange: UserChange?
        /// The previous login's keyring items, where removing them failed.
        package let leftover: KeyringLeftover?
    }

    /// Another user logged in: the previous user's session ended in every
    /// process, then their user-scoped data went.
    package struct UserChange: Sendable, Equatable {
        /// The user-scoped defaults keys and shared files removed.
        package let removedKeys: [String]
        package let removedFiles: [String]
        /// The previous user's refresh token, where the keyring kept it.
        package let leftover: KeyringLeftover?
    }

    /// Why a login was not saved, and the user change made before it
    /// failed (that one stands: the previous user's session has ended).
    package struct LoginFailure: Error, Sendable, CustomStringConvertible {
        package let error: AuthError
        package let userChange: UserChange?

        package var description: String { error.description }
    }

    /// Where the last user's identity is kept, through logouts: a later
    /// login by someone else clears their data even after a logout.
    static let lastUserKey = "lastUser"
    /// The identity of a user nobody can tell apart: always someone else.
    static let unknownUser = "unknown"

    /// Stores a login, under the refresh lock: the configuration and token
    /// sets, their secrets in `location` (see `CredentialStore.saveLogin`).
    /// A user login whose identity (server and subject) is not the last
    /// user's, or is unknown, first ends the previous user's session and
    /// removes their user-scoped data. Without a new client token, the
    /// stored one of the same server and client is kept.
    package func saveLogin(_ configuration: AuthConfiguration, user: TokenSet?, client: TokenSet?,
                          in location: CredentialStore.SecretLocation) throws(LoginFailure) -> SavedLogin {
        var change: UserChange?
        do {
            return try withRefreshLock { () throws(AuthError) in
                let identity = user.map { configuration.userIdentity(of: $0) ?? Self.unknownUser }
                if let identity { change = try endPreviousUser(unless: identity) }
                let leftover = try save(configuration, user: user, client: client, in: location, identity: identity)
                return SavedLogin(userChange: change, leftover: leftover)
            }
        } catch {
            throw LoginFailure(error: error, userChange: change)
        }
    }

    /// Ends the previous user's session everywhere, then removes their
    /// user-scoped data, unless `identity` is theirs. nil: the same user,
    /// or nobody before.
    private func endPreviousUser(unless identity: String) throws(AuthError) -> UserChange? {
        let snapshot = try snapshot()
        let stored = snapshot.tokens(.user)
        let previous = snapshot.values[Self.lastUserKey]?.stringValue
            ?? stored.map { snapshot.configuration?.userIdentity(of: $0) ?? Self.unknownUser }
        guard let previous, previous != identity || identity == Self.unknownUser else { return nil }
        // The session first: no process goes on reading as the previous user while the data goes.
        do { try store.shared.update { _ = $0.removeValue(forKey: TokenKind.user.rawValue) } } catch { throw .store(error) }
        let leftover = store.keyring(snapshot).flatMap { Self.clearing(.userRefreshToken, from: $0) }
        let cleared: (keys: [String], files: [String])
        do { cleared = try UserScopedData(group: group).clear() } catch { throw .store(error) }
        return UserChange(removedKeys: cleared.keys, removedFiles: cleared.files, leftover: leftover)
    }

    private func save(_ configuration: AuthConfiguration, user: TokenSet?, client: TokenSet?,
                      in location: CredentialStore.SecretLocation, identity: String?) throws(AuthError) -> KeyringLeftover? {
        // A client token of the same server and client is kept (with its
        // secret, from wherever it was); another's could not be renewed here.
        let before = try snapshot()
        let sameClient = before.configuration.map {
            ($0.style, $0.tokenURL, $0.clientID) == (configuration.style, configuration.tokenURL, configuration.clientID)
        } ?? false
        let kept = client == nil && sameClient ? try before.tokens(.client).map { set throws(AuthError) in
            try store.withRefreshToken(set, as: .client, configuration: before.configuration)
        } : nil
        let leftover = try store.saveLogin(configuration, user: user, client: client ?? kept, in: location) { values in
            // Kept at logout, so a later login by someone else still clears.
            if let identity { values[Self.lastUserKey] = .string(identity) }
        }
        return leftover.map { .previousGroup($0.group, $0.error) }
    }
}
