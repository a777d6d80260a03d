import Synchronization
import TetherGroup
import TetherJSON
import TetherLoop

/// A group's secrets (the refresh tokens and the client secret) in the
/// user's keyring: the credentials file then keeps everything else, the
/// access tokens included (a cached read never touches D-Bus), a random
/// `refreshTokenID` in each refresh token's place, and the random ID its
/// items are filed under (`keyringGroup`), new with each login. Writes go
/// keyring first, then the file: a writer that dies between them leaves the
/// new refresh token in the keyring, where the next refresh reads it. Every
/// method here that reads or writes the keyring blocks: call it off the
/// event loop.
extension CredentialStore {
    /// Where a group keeps its refresh tokens and client secret.
    package enum SecretLocation: String, Sendable, CaseIterable {
        case file, keyring
    }

    static let keyringGroupKey = "keyringGroup"

    /// The group's items as the store names them now; nil where its secrets
    /// are not in the keyring.
    package func keyring(_ snapshot: Snapshot) -> Keyring? {
        guard snapshot.secretLocation == .keyring, let id = snapshot.values[Self.keyringGroupKey]?.stringValue else { return nil }
        return Keyring(group: id, place: groupPath)
    }

    /// The latest secrets this process read from or wrote to the keyring,
    /// for the log redactor (the file's are read from the file).
    static let keyringSecrets = Mutex<[String]>([])

    static func remember(_ secret: String) {
        keyringSecrets.withLock { secrets in
            secrets.append(secret)
            if secrets.count > 16 { secrets.removeFirst(secrets.count - 16) }
        }
    }

    /// The keyring item's account for a token set: the user, else the client.
    static func account(of set: TokenSet, as kind: TokenKind, configuration: AuthConfiguration?) -> String {
        kind == .user ? set.subject ?? "user" : configuration?.clientID ?? "client"
    }

    /// `set` with its refresh token, read from the keyring where it lives there.
    package func withRefreshToken(_ set: TokenSet, as kind: TokenKind,
                                  configuration: AuthConfiguration?) throws(AuthError) -> TokenSet {
        guard set.refreshToken == nil, set.refreshTokenID != nil else { return set }
        var resolved = set
        resolved.refreshToken = try secret(.refreshToken(kind), account: Self.account(of: set, as: kind, configuration: configuration),
                                           named: "\(kind.rawValue) refresh token")
        return resolved
    }

    /// `configuration` with its client secret, read from the keyring where it lives there.
    package func withClientSecret(_ configuration: AuthConfiguration) throws(AuthError) -> AuthConfiguration {
        guard configuration.clientSecretInKeyring, configuration.clientSecret == nil else { return configuration }
        var resolved = configuration
        resolved.clientSecret = try secret(.clientSecret, account: configuration.clientID, named: "client secret")
        return resolved
    }

    /// The keyring's `secret` for `account`; none is an error too (the file
    /// says there is one).
    private func secret(_ secret: Keyring.Secret, account: String, named name: String) throws(AuthError) -> String {
        let snapshot: Snapshot
        do { snapshot = try self.snapshot() } catch { throw .store(error) }
        guard let keyring = keyring(snapshot) else {
            throw .keyring(KeyringError("the credentials file names a \(name) in the keyring, but no keyring group; log in again"))
        }
        let found: String?
        do { found = try keyring.lookup(secret, account: account) } catch { throw .keyring(error) }
        guard let found else { throw .keyring(KeyringError("it holds no \(name) for \(account) (removed outside Tether?); log in again")) }
        Self.remember(found)
        return found
    }

    /// Replaces token set `kind` wherever the group keeps its secrets: in a
    /// keyring group, its refresh token replaces the keyring's item first.
    package func saveTokens(_ set: TokenSet, as kind: TokenKind) throws(AuthError) {
        let snapshot: Snapshot
        do { snapshot = try self.snapshot() } catch { throw .store(error) }
        let stored = try Self.storedForm(set, as: kind, in: keyring(snapshot), configuration: snapshot.configuration)
        do { try shared.update { $0[kind.rawValue] = stored } } catch { throw .store(error) }
    }

    /// What the file keeps of `set`: with a keyring, the refresh token goes
    /// there (written now) and a new ID takes its place.
    static func storedForm(_ set: TokenSet, as kind: TokenKind, in keyring: Keyring?,
                           configuration: AuthConfiguration?) throws(AuthError) -> JSONValue {
        guard let keyring, let refreshToken = set.refreshToken else { return set.jsonValue }
        do {
            try keyring.store(refreshToken, as: .refreshToken(kind), account: account(of: set, as: kind, configuration: configuration))
        } catch {
            throw .keyring(error)
        }
        remember(refreshToken)
        var kept = set
        kept.refreshToken = nil
        kept.refreshTokenID = newID()
        return kept.jsonValue
    }

    /// What the file keeps of `configuration`: with a keyring, the client
    /// secret goes there (written now).
    static func storedForm(_ configuration: AuthConfiguration, in keyring: Keyring?) throws(AuthError) -> JSONValue {
        guard let keyring, let secret = configuration.clientSecret else { return configuration.jsonValue }
        do { try keyring.store(secret, as: .clientSecret, account: configuration.clientID) } catch { throw .keyring(error) }
        remember(secret)
        var kept = configuration
        kept.clientSecret = nil
        kept.clientSecretInKeyring = true
        return kept.jsonValue
    }

    /// Stores a login: the configuration and token sets (with their
    /// secrets; `client` nil keeps none), their secrets in `location`, in
    /// one upsert of the file, under the caller's refresh lock. `edit`
    /// changes the rest of the values in the same upsert. In the keyring the
    /// login files its secrets under a new group ID, then removes every item
    /// of the previous one: another user's or client's, or kinds this login
    /// has none of, leave nothing behind. Returns the previous group ID and
    /// why its removal failed, if it did (the login itself stands).
    @discardableResult
    package func saveLogin(_ configuration: AuthConfiguration, user: TokenSet?, client: TokenSet?, in location: SecretLocation,
                           edit: (inout [String: JSONValue]) -> Void) throws(AuthError) -> (group: String, error: KeyringError)? {
        let previous: Keyring?
        do { previous = keyring(try snapshot()) } catch { throw .store(error) }
        let fresh = location == .keyring ? Keyring(group: Self.newID(), place: groupPath) : nil
        let storedConfiguration = try Self.storedForm(configuration, in: fresh)
        let storedUser = try user.map { set throws(AuthError) in try Self.storedForm(set, as: .user, in: fresh, configuration: configuration) }
        let storedClient = try client.map { set throws(AuthError) in try Self.storedForm(set, as: .client, in: fresh, configuration: configuration) }
        do {
            try shared.update { values in
                edit(&values)
                values[Self.configurationKey] = storedConfiguration
                values[TokenKind.user.rawValue] = storedUser
                values[TokenKind.client.rawValue] = storedClient
                values[Self.secretLocationKey] = fresh == nil ? nil : .string(SecretLocation.keyring.rawValue)
                values[Self.keyringGroupKey] = fresh.map { .string($0.group) }
            }
        } catch {
            throw .store(error)
        }
        guard let previous else { return nil }
        do { try previous.clear() } catch { return (previous.group, error) }
        return nil
    }

    /// A fresh random ID: 16 hex digits.
    static func newID() -> String {
        String(UInt64.random(in: 0...UInt64.max), radix: 16)
    }
}
