import TetherJSON

/// One access token with what it takes to renew it. The description never
/// shows a token, so a TokenSet can be logged or interpolated safely.
package struct TokenSet: Sendable, Equatable, CustomStringConvertible {
    package var accessToken: String
    /// nil also where the refresh token lives in the keyring and was not
    /// read: `refreshTokenID` then says there is one.
    package var refreshToken: String?
    /// In a group that keeps its secrets in the keyring: a random name for
    /// the refresh token stored there, new with each token, so processes
    /// tell tokens apart without reading the keyring. nil in a file group.
    package var refreshTokenID: String?
    /// What tells this set's refresh token from another's, in either store.
    package var refreshIdentity: String? { refreshTokenID ?? refreshToken }
    /// Whether it can be renewed with a refresh token (wherever that lives).
    package var isRefreshable: Bool { refreshIdentity != nil }
    /// Seconds since 1970 as the server gave it (a JWT's `exp` is kept
    /// exactly, however large); nil when neither the token nor the response said.
    package var expiry: JSONNumber?
    /// `expiry` as a Double, for arithmetic.
    package var expiresAt: Double? {
        get { expiry?.doubleValue }
        set { expiry = newValue.map { JSONNumber($0) } }
    }
    package var tokenType: String
    package var scope: String?
    /// The user name the set was obtained for (password grant only).
    package var subject: String?
    /// `subject` fit for a terminal (a server's claim: printable ASCII, at most 64 characters).
    package var displaySubject: String? { subject.map(OAuth2Requests.printable) }
    /// Seconds since 1970 when we received it; bounds the leeway.
    package var receivedAt: Double?

    package init(accessToken: String, refreshToken: String? = nil, expiresAt: Double? = nil,
                 tokenType: String = "Bearer", scope: String? = nil, subject: String? = nil,
                 receivedAt: Double? = nil) {
        self.init(accessToken: accessToken, refreshToken: refreshToken, expiry: expiresAt.map { JSONNumber($0) },
                  tokenType: tokenType, scope: scope, subject: subject, receivedAt: receivedAt)
    }

    package init(accessToken: String, refreshToken: String? = nil, expiry: JSONNumber?,
                 tokenType: String = "Bearer", scope: String? = nil, subject: String? = nil,
                 receivedAt: Double? = nil) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiry = expiry
        self.tokenType = tokenType
        self.scope = scope
        self.subject = subject
        self.receivedAt = receivedAt
    }

    /// True when the token should be renewed: it expires within `leeway`
    /// seconds of `now`, which absorbs clock skew between us and the server.
    /// The leeway is at most half the token's lifetime: a token that lives
    /// 30 s with a 60 s leeway would otherwise be due the moment it arrives,
    /// and every read would refresh it.
    package func needsRefresh(now: Double, leeway: Double) -> Bool {
        guard let expiresAt else { return false }
        var leeway = leeway
        if let receivedAt, expiresAt > receivedAt { leeway = min(leeway, (expiresAt - receivedAt) / 2) }
        return now + leeway >= expiresAt
    }

    /// True once the token is past its expiry, with no leeway.
    package func isExpired(now: Double) -> Bool {
        guard let expiresAt else { return false }
        return now >= expiresAt
    }

    package var description: String {
        "TokenSet(accessToken: <redacted>, refreshToken: \(refreshToken == nil ? "none" : "<redacted>"), "
            + "expiresAt: \(expiry?.description ?? "unknown"))"
    }

    // MARK: - Stored form

    package var jsonValue: JSONValue {
        var object: [String: JSONValue] = ["accessToken": .string(accessToken), "tokenType": .string(tokenType)]
        if let refreshToken { object["refreshToken"] = .string(refreshToken) }
        if let refreshTokenID { object["refreshTokenID"] = .string(refreshTokenID) }
        if let expiry { object["expiresAt"] = .number(expiry) }
        if let scope { object["scope"] = .string(scope) }
        if let subject { object["subject"] = .string(subject) }
        if let receivedAt { object["receivedAt"] = .double(receivedAt) }
        return .object(object)
    }

    /// nil when `value` is not a stored token set.
    package init?(_ value: JSONValue?) {
        guard let value, let accessToken = value["accessToken"]?.stringValue, !accessToken.isEmpty else { return nil }
        self.init(accessToken: accessToken,
                  refreshToken: value["refreshToken"]?.stringValue,
                  expiry: value["expiresAt"]?.numberValue,
                  tokenType: value["tokenType"]?.stringValue ?? "Bearer",
                  scope: value["scope"]?.stringValue,
                  subject: value["subject"]?.stringValue,
                  receivedAt: value["receivedAt"]?.doubleValue)
        refreshTokenID = value["refreshTokenID"]?.stringValue
    }
}
