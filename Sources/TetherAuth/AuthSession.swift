import TetherGroup

/// The group's sign-in, one API for whatever changes it: a login saved
/// (`saveLogin`: another user's login first ends the previous user's
/// session and removes their user-scoped data), a logout (`logout`), and a
/// session the server refused (`end(_:ifRefreshIdentity:)`, the broker's).
/// Each change is made under the group's refresh lock, so it never
/// interleaves with a refresh. Nothing here prints: each call returns what
/// it did, for the caller to tell. Package access: `tether`'s commands and
/// the broker use it; an extension author's SDK does not show it.
package struct AuthSession: Sendable {
    /// The group's credentials.
    package let store: CredentialStore
    /// Where the refresh lock and the user-scoped data are.
    let group: GroupDirectory

    package init(group: GroupDirectory) throws(GroupError) {
        self.init(group: group, store: try CredentialStore(group: group))
    }

    init(group: GroupDirectory, store: CredentialStore) {
        self.group = group
        self.store = store
    }

    /// A keyring item that should have gone and did not. The change it
    /// belonged to stands: the item's session has ended here already.
    package enum KeyringLeftover: Sendable, Equatable, CustomStringConvertible {
        /// The group's `secret` items (an old refresh token).
        case secret(Keyring.Secret, KeyringError)
        /// Every item a previous login filed under `group`.
        case previousGroup(String, KeyringError)

        package var description: String {
            switch self {
            case .secret(let secret, let error):
                "the keyring still holds an old \(secret.rawValue) of this group (\(error)); 'tether logout' removes it"
            case .previousGroup(let group, let error):
                "the keyring still holds this group's previous secrets (\(error)); remove them with: secret-tool clear group \(group)"
            }
        }
    }

    /// Removes token set `kind` if its refresh token is still the one
    /// `refreshIdentity` names: a refused refresh ends the session it was
    /// made for, never one that a writer outside the lock has renewed since
    /// it was read. The caller holds the refresh lock. True if it was removed.
    @discardableResult
    func end(_ kind: TokenKind, ifRefreshIdentity refreshIdentity: String?) throws(AuthError) -> Bool {
        do {
            return try store.shared.update { values in
                guard TokenSet(values[kind.rawValue])?.refreshIdentity == refreshIdentity else { return false }
                values.removeValue(forKey: kind.rawValue)
                return true
            }
        } catch {
            throw .store(error)
        }
    }

    /// Runs `body` holding the group's refresh lock (waiting for it as long
    /// as a store writer waits).
    func withRefreshLock<T>(_ body: () throws(AuthError) -> T) throws(AuthError) -> T {
        let lock: ExclusiveLock
        do { lock = try ExclusiveLock.acquire(path: try group.preparedRefreshLockPath()) } catch { throw .store(error) }
        defer { lock.release() }
        return try body()
    }

    func snapshot() throws(AuthError) -> CredentialStore.Snapshot {
        do { return try store.snapshot() } catch { throw .store(error) }
    }

    /// Removes the group's `secret` items from `keyring`; what stayed, if anything did.
    static func clearing(_ secret: Keyring.Secret, from keyring: Keyring) -> KeyringLeftover? {
        do {
            try keyring.clear(secret)
            return nil
        } catch {
            return .secret(secret, error)
        }
    }
}
