import Synchronization
import TetherGroup
import TetherJSON

/// The credential store's records, typed: the configuration and one token
/// set per `TokenKind`. Built on `SharedStore`, so each change is an atomic
/// upsert under the store's lock and no writer loses another's update.
package struct CredentialStore: Sendable {
    package let shared: SharedStore
    /// The group directory: what the keyring's items name.
    package let groupPath: String

    static let configurationKey = "configuration"
    static let secretLocationKey = "secretStore"

    package init(group: GroupDirectory) throws(GroupError) {
        shared = try SharedStore.credentials(in: group)
        groupPath = group.path
    }

    package init(shared: SharedStore) {
        self.shared = shared
        groupPath = shared.path.lastIndex(of: "/").map { String(shared.path[..<$0]) } ?? "."
    }

    /// The stored records as of now (one lstat when nothing changed).
    package func snapshot() throws(GroupError) -> Snapshot {
        Snapshot(values: try shared.values())
    }

    /// Every stored secret, read without a lock or any side effect: for the
    /// log handler's redactor, which runs inside logging calls.
    package func secretsWithoutLocking() -> [String] {
        Snapshot(values: shared.valuesWithoutLocking()).secrets + Self.keyringSecrets.withLock { $0 }
    }

    /// Replaces token set `kind` (nil removes it) in one atomic upsert, as
    /// it is (a file group's form; see `saveTokens` for either store).
    package func save(_ set: TokenSet?, as kind: TokenKind) throws(GroupError) {
        try shared.update { $0[kind.rawValue] = set?.jsonValue }
    }

    package func save(_ configuration: AuthConfiguration) throws(GroupError) {
        try shared.update { $0[Self.configurationKey] = configuration.jsonValue }
    }

    package struct Snapshot: Sendable {
        package let values: [String: JSONValue]

        package var configuration: AuthConfiguration? { AuthConfiguration(values[CredentialStore.configurationKey]) }
        /// Where the refresh tokens and the client secret are kept.
        package var secretLocation: SecretLocation {
            values[CredentialStore.secretLocationKey]?.stringValue == SecretLocation.keyring.rawValue ? .keyring : .file
        }
        package func tokens(_ kind: TokenKind) -> TokenSet? { TokenSet(values[kind.rawValue]) }

        /// Every secret stored: access and refresh tokens, the client
        /// secret. For the log handler's redactor, never for output.
        package var secrets: [String] {
            var secrets: [String] = []
            for kind in [TokenKind.user, .client] {
                guard let set = tokens(kind) else { continue }
                secrets.append(set.accessToken)
                if let refresh = set.refreshToken { secrets.append(refresh) }
            }
            if let secret = configuration?.clientSecret { secrets.append(secret) }
            return secrets
        }

        package var state: AuthState {
            if tokens(.user) != nil { return .userAuthenticated }
            if tokens(.client) != nil { return .clientAuthenticated }
            return .notAuthenticated
        }

        /// The set a caller without a preference gets: the user's, else the client's.
        package var preferredKind: TokenKind? {
            switch state {
            case .userAuthenticated: .user
            case .clientAuthenticated: .client
            case .notAuthenticated: nil
            }
        }
    }
}
