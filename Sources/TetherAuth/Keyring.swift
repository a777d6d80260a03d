import CTetherSecret
import SystemPackage
import TetherLoop
#if canImport(Glibc)
import Glibc
#endif

/// The user's keyring, through the freedesktop Secret Service (libsecret,
/// loaded at first use), as gh, gcloud and git-credential-libsecret keep
/// their tokens: where a group logged in with `--store keyring` keeps its
/// refresh tokens and its client secret. Each item names the group (by the
/// random ID its credentials file keeps: a path has many spellings), the
/// secret and the account (the user, or the client); its label names the
/// group's directory, for people.
///
/// Every call blocks on D-Bus: the broker makes them off the event loop.
/// A locked collection is an error, never "no secret", and is refused
/// before the call: libsecret would ask the user to unlock it, and that
/// prompt has no deadline (nor, in libsecret, a cancel that works) while
/// the caller holds the refresh lock. Tether never shows a dialog.
public struct Keyring: Sendable {
    /// Which secret an item holds.
    public enum Secret: String, Sendable, CaseIterable {
        case userRefreshToken = "refresh-token.user"
        case clientRefreshToken = "refresh-token.client"
        case clientSecret = "client-secret"

        /// The refresh token of `kind`.
        public static func refreshToken(_ kind: TokenKind) -> Secret {
            kind == .user ? .userRefreshToken : .clientRefreshToken
        }
    }

    /// The group's ID: what the items' `group` attribute holds.
    public let group: String
    /// The group's directory, for the items' labels.
    public let place: String

    public init(group: String, place: String) {
        self.group = group
        self.place = place
    }

    /// Stores `value`, replacing the item with the same group, secret and account.
    public func store(_ value: String, as secret: Secret, account: String) throws(KeyringError) {
        let label = "Tether \(secret == .clientSecret ? "client secret" : "refresh token") for \(account) (\(place))"
        try Self.refuseLocked()
        try Self.call(attributes(secret, account)) { attributes, error, size in
            tether_secret_store(attributes, label, value, error, size)
        }
    }

    /// The secret stored for `account`, or nil when there is none. A locked
    /// collection (libsecret finds nothing where a prompt was refused) is
    /// an error.
    public func lookup(_ secret: Secret, account: String) throws(KeyringError) -> String? {
        var found: String?
        try Self.refuseLocked()
        try Self.call(attributes(secret, account)) { attributes, error, size in
            var value: UnsafeMutablePointer<CChar>?
            let rc = tether_secret_lookup(attributes, &value, error, size)
            if let value {
                found = String(cString: value)
                tether_secret_free(value)
            }
            return rc
        }
        // Locked since the check above: libsecret finds nothing where the prompt was refused.
        if found == nil { try Self.refuseLocked() }
        return found
    }

    /// "it is locked" when the default collection is.
    static func refuseLocked() throws(KeyringError) {
        if try defaultCollectionIsLocked() { throw KeyringError("it is locked") }
    }

    /// Whether the default collection is locked.
    static func defaultCollectionIsLocked() throws(KeyringError) -> Bool {
        var error = [CChar](repeating: 0, count: 512)
        let rc = tether_secret_default_locked(&error, error.count)
        guard rc >= 0 else { throw KeyringError(buffer: error, otherwise: "the keyring failed") }
        return rc == 1
    }

    /// Removes the group's items: those of `secret` and `account` when
    /// given, else all of them. True if any was there.
    @discardableResult
    public func clear(_ secret: Secret? = nil, account: String? = nil) throws(KeyringError) -> Bool {
        var pairs = ["group", group]
        if let secret { pairs += ["secret", secret.rawValue] }
        if let account { pairs += ["account", account] }
        var removed = false
        try Self.refuseLocked()
        try Self.call(pairs) { attributes, error, size in
            let rc = tether_secret_clear(attributes, error, size)
            removed = rc == 1
            return rc
        }
        return removed
    }

    /// nil when the keyring takes a secret now (a Secret Service answers,
    /// with an unlocked default collection: an item is stored and removed);
    /// else why not.
    public static func unavailability() -> KeyringError? {
        let probe = Keyring(group: "probe-" + String(UInt64.random(in: 0...UInt64.max), radix: 16), place: "a check by tether")
        do throws(KeyringError) {
            try probe.store("probe", as: .clientSecret, account: "tether")
            try probe.clear()
            return nil
        } catch {
            return error
        }
    }

    private func attributes(_ secret: Secret, _ account: String) -> [String] {
        ["group", group, "secret", secret.rawValue, "account", account]
    }

    /// Calls `body` with `pairs` as a NULL-terminated C list and an error
    /// buffer; a negative return is the buffer's sentence.
    private static func call(_ pairs: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>, UnsafeMutablePointer<CChar>, Int) -> Int32) throws(KeyringError) {
        let strings = pairs.map { strdup($0) }
        defer { strings.forEach { free($0) } }
        guard !strings.contains(where: { $0 == nil }) else { throw KeyringError("out of memory") }
        var list: [UnsafePointer<CChar>?] = strings.map { UnsafePointer($0) } + [nil]
        var error = [CChar](repeating: 0, count: 512)
        let rc: Int32 = list.withUnsafeMutableBufferPointer { listBuffer in
            error.withUnsafeMutableBufferPointer { errorBuffer in
                guard let listStart = listBuffer.baseAddress, let errorStart = errorBuffer.baseAddress else { return -1 }
                return body(UnsafePointer(listStart), errorStart, errorBuffer.count)
            }
        }
        guard rc >= 0 else { throw KeyringError(buffer: error, otherwise: "the keyring failed") }
    }
}

/// Why the keyring could not be used: one sentence (libsecret's or GLib's;
/// never a secret).
public struct KeyringError: Error, Equatable, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }

    /// The sentence the C side wrote into `buffer`, else `otherwise`.
    init(buffer: [CChar], otherwise: String) {
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        description = text.isEmpty ? otherwise : text
    }
}
