import TetherJSON

/// `token.get`: a valid access token from the host's broker, for a role
/// that may not refresh itself.
package struct TokenRequest: Sendable, Equatable {
    /// "user" or "client"; nil: the user's, else the client's.
    package var kind: String?
    /// A token a server refused before its expiry: one coordinated refresh.
    package var rejected: String?

    package init(kind: String? = nil, rejected: String? = nil) {
        self.kind = kind
        self.rejected = rejected
    }

    private enum Field { static let kind = "kind", rejected = "rejected" }

    package init(params: JSONValue?) {
        self.init(kind: params?[Field.kind]?.stringValue, rejected: params?[Field.rejected]?.stringValue)
    }

    /// nil when it asks nothing in particular (no params at all).
    package var json: JSONValue? {
        var object: [String: JSONValue] = [:]
        if let kind { object[Field.kind] = .string(kind) }
        if let rejected { object[Field.rejected] = .string(rejected) }
        return object.isEmpty ? nil : .object(object)
    }
}

/// `token.get`'s answer.
package struct TokenGrant: Sendable, Equatable {
    package var accessToken: String
    /// Seconds since the epoch, as the store keeps it.
    package var expiresAt: JSONNumber?

    package init(accessToken: String, expiresAt: JSONNumber?) {
        self.accessToken = accessToken
        self.expiresAt = expiresAt
    }

    private enum Field { static let accessToken = "accessToken", expiresAt = "expiresAt" }

    /// nil when the answer carries no token.
    package init?(json: JSONValue) {
        guard let token = json[Field.accessToken]?.stringValue else { return nil }
        self.init(accessToken: token, expiresAt: json[Field.expiresAt]?.numberValue)
    }

    package var json: JSONValue {
        var object: [String: JSONValue] = [Field.accessToken: .string(accessToken)]
        if let expiresAt { object[Field.expiresAt] = .number(expiresAt) }
        return .object(object)
    }
}
