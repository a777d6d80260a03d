import Synchronization
import TetherGroup
import TetherJSON
import TetherLoop

/// A group's secrets (the refresh tokens and the client secret) in the
/// user's keyring: the credentials file then keeps everything else, the
/// access tokens included (a cached read never touches D-Bus), and a random
/// `refreshTokenID` in each refresh token's place. Writes go keyring first,
/// then the file: a writer that dies between them leaves the new refresh
/// token in the keyring, where the next refresh reads it. Every method here
/// that reads or writes the keyring blocks: call it off the event loop.
extension CredentialStore {
    /// Where a group keeps its refresh tokens and client secret.
    public enum SecretLocation: String, Sendable, CaseIterable {
        case file, keyring
    }

    /// The group's items in the user's keyring.
    public var keyring: Keyring { Keyring(group: groupPath) }

    /// Secrets this process read from the keyring, for the log redactor.
    static let readFromKeyring = Mutex<Set<String>>([])

    /// The keyring item's account for a token set: the user, else the client.
    static func account(of set: TokenSet, as kind: TokenKind, configuration: AuthConfiguration?) -> String {
        kind == .user ? set.subject ?? "user" : configuration?.clientID ?? "client"
    }

    /// `set` with its refresh token, read from the keyring where it lives there.
    public func withRefreshToken(_ set: TokenSet, as kind: TokenKind,
                                 configuration: AuthConfiguration?) throws(AuthError) -> TokenSet {
        guard set.refreshToken == nil, set.refreshTokenID != nil else { return set }
        var resolved = set
        resolved.refreshToken = try secret(.refreshToken(kind), account: Self.account(of: set, as: kind, configuration: configuration),
                                           named: "\(kind.rawValue) refresh token")
        return resolved
    }

    /// `configuration` with its client secret, read from the keyring where it lives there.
    public func withClientSecret(_ configuration: AuthConfiguration) throws(AuthError) -> AuthConfiguration {
        guard configuration.clientSecretInKeyring, configuration.clientSecret == nil else { return configuration }
        var resolved = configuration
        resolved.clientSecret = try secret(.clientSecret, account: configuration.clientID, named: "client secret")
        return resolved
    }

    /// The keyring's `secret` for `account`; none is an error too (the file
    /// says there is one). Remembered for the log redactor.
    private func secret(_ secret: Keyring.Secret, account: String, named name: String) throws(AuthError) -> String {
        let found: String?
        do { found = try keyring.lookup(secret, account: account) } catch { throw .keyring(error) }
        guard let found else { throw .keyring(KeyringError("it holds no \(name) for \(account) (removed outside Tether?); log in again")) }
        Self.readFromKeyring.withLock { _ = $0.insert(found) }
        return found
    }

    /// Replaces token set `kind` wherever the group keeps its secrets: in a
    /// keyring group, its refresh token replaces the keyring's item first.
    public func saveTokens(_ set: TokenSet, as kind: TokenKind) throws(AuthError) {
        let snapshot: Snapshot
        do { snapshot = try self.snapshot() } catch { throw .store(error) }
        let stored = try storedForm(set, as: kind, in: snapshot.secretLocation, configuration: snapshot.configuration)
        do { try shared.update { $0[kind.rawValue] = stored } } catch { throw .store(error) }
    }

    /// What the file keeps of `set`: in a keyring group the refresh token
    /// goes to the keyring (written now) and a new ID takes its place.
    func storedForm(_ set: TokenSet, as kind: TokenKind, in location: SecretLocation,
                    configuration: AuthConfiguration?) throws(AuthError) -> JSONValue {
        guard location == .keyring, let refreshToken = set.refreshToken else { return set.jsonValue }
        do {
            try keyring.store(refreshToken, as: .refreshToken(kind),
                              account: Self.account(of: set, as: kind, configuration: configuration))
        } catch {
            throw .keyring(error)
        }
        var kept = set
        kept.refreshToken = nil
        kept.refreshTokenID = Self.newID()
        return kept.jsonValue
    }

    /// What the file keeps of `configuration`: in a keyring group the client
    /// secret goes to the keyring (written now).
    func storedForm(_ configuration: AuthConfiguration, in location: SecretLocation) throws(AuthError) -> JSONValue {
        guard location == .keyring, let secret = configuration.clientSecret else { return configuration.jsonValue }
        do { try keyring.store(secret, as: .clientSecret, account: configuration.clientID) } catch { throw .keyring(error) }
        var kept = configuration
        kept.clientSecret = nil
        kept.clientSecretInKeyring = true
        return kept.jsonValue
    }

    /// Stores a login: the configuration and token sets, their secrets in
    /// `location`, in one upsert of the file (under the caller's refresh
    /// lock). `edit` changes the rest of the values in the same upsert.
    /// Moving to the keyring leaves no secret in the file; moving to the
    /// file removes the group's items from the keyring afterwards.
    public func saveLogin(_ configuration: AuthConfiguration, user: TokenSet?, client: TokenSet?, in location: SecretLocation,
                          edit: (inout [String: JSONValue]) -> Void) throws(AuthError) {
        let previous: SecretLocation
        do { previous = try snapshot().secretLocation } catch { throw .store(error) }
        let storedConfiguration = try storedForm(configuration, in: location)
        let storedUser = try user.map { set throws(AuthError) in try storedForm(set, as: .user, in: location, configuration: configuration) }
        let storedClient = try client.map { set throws(AuthError) in try storedForm(set, as: .client, in: location, configuration: configuration) }
        do {
            try shared.update { values in
                edit(&values)
                values[Self.configurationKey] = storedConfiguration
                values[TokenKind.user.rawValue] = storedUser
                if let storedClient { values[TokenKind.client.rawValue] = storedClient }
                values[Self.secretLocationKey] = location == .keyring ? .string(location.rawValue) : nil
            }
        } catch {
            throw .store(error)
        }
        if previous == .keyring && location == .file {
            do { try keyring.clear() } catch { throw .keyring(error) }
        }
    }

    /// A fresh random ID: 16 hex digits.
    static func newID() -> String {
        String(UInt64.random(in: 0...UInt64.max), radix: 16)
    }
}
