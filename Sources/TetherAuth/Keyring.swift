
/// The user's keyring, through the freedesktop Secret Service (over the
/// one D-Bus client, sd-bus loaded at first use), as gh, gcloud and git-credential-libsecret keep
/// their tokens: where a group logged in with `--store keyring` keeps its
/// refresh tokens and its client secret. Each item names the group (by the
/// random ID its credentials file keeps: a path has many spellings), the
/// secret and the account (the user, or the client); its label names the
/// group's directory, for people.
///
/// Every call blocks on D-Bus: the broker makes them off the event loop.
/// A locked collection is an error, never "no secret", and is refused
/// before the call: unlocking would ask the user through a prompt that
/// has no deadline while the caller holds the refresh lock. Tether never
/// shows a dialog.
package struct Keyring: Sendable {
    /// Which secret an item holds.
    package enum Secret: String, Sendable, CaseIterable {
        case userRefreshToken = "refresh-token.user"
        case clientRefreshToken = "refresh-token.client"
        case clientSecret = "client-secret"

        /// The refresh token of `kind`.
        package static func refreshToken(_ kind: TokenKind) -> Secret {
            kind == .user ? .userRefreshToken : .clientRefreshToken
        }
    }

    /// The group's ID: what the items' `group` attribute holds.
    package let group: String
    /// The group's directory, for the items' labels.
    package let place: String

    package init(group: String, place: String) {
        self.group = group
        self.place = place
    }

    /// Stores `value`, replacing the item with the same group, secret and account.
    package func store(_ value: String, as secret: Secret, account: String) throws(KeyringError) {
        let label = "Tether \(secret == .clientSecret ? "client secret" : "refresh token") for \(account) (\(place))"
        try Self.withService { service throws(KeyringError) in
            try service.store(value, label: label, attributes: attributes(secret, account))
        }
    }

    /// The secret stored for `account`, or nil when there is none. A locked
    /// collection, or a locked item, is an error, never "none".
    package func lookup(_ secret: Secret, account: String) throws(KeyringError) -> String? {
        try Self.withService { service throws(KeyringError) -> String? in
            if try service.defaultCollection().locked { throw KeyringError("it is locked") }
            guard let item = try service.search(attributes(secret, account)).first else { return nil }
            return try service.secret(of: item)
        }
    }

    /// Whether the default collection is locked.
    static func defaultCollectionIsLocked() throws(KeyringError) -> Bool {
        try withService { service throws(KeyringError) in try service.defaultCollection().locked }
    }

    /// Removes the group's items: those of `secret` and `account` when
    /// given, else all of them. True if any was there.
    @discardableResult
    package func clear(_ secret: Secret? = nil, account: String? = nil) throws(KeyringError) -> Bool {
        var pairs = ["group": group]
        if let secret { pairs["secret"] = secret.rawValue }
        if let account { pairs["account"] = account }
        return try Self.withService { service throws(KeyringError) -> Bool in
            if try service.defaultCollection().locked { throw KeyringError("it is locked") }
            let items = try service.search(pairs)
            for item in items { try service.delete(item) }
            return !items.isEmpty
        }
    }

    /// nil when the keyring takes a secret now (a Secret Service answers,
    /// with an unlocked default collection: an item is stored and removed);
    /// else why not.
    package static func unavailability() -> KeyringError? {
        let probe = Keyring(group: "probe-" + String(UInt64.random(in: 0...UInt64.max), radix: 16), place: "a check by tether")
        do throws(KeyringError) {
            try probe.store("probe", as: .clientSecret, account: "tether")
            try probe.clear()
            return nil
        } catch {
            return error
        }
    }

    private func attributes(_ secret: Secret, _ account: String) -> [String: String] {
        ["group": group, "secret": secret.rawValue, "account": account]
    }

    /// A session with the service for `body`'s calls, ended after them:
    /// each use connects anew, so a keyring or a bus restarted since the
    /// last is simply found again.
    private static func withService<T>(_ body: (SecretService) throws(KeyringError) -> T) throws(KeyringError) -> T {
        let service = try SecretService()
        defer { service.close() }
        return try body(service)
    }
}

/// Why the keyring could not be used: one sentence (the bus's or the
/// service's; never a secret).
package struct KeyringError: Error, Equatable, Sendable, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }

}
