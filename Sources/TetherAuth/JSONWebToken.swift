import TetherJSON

/// The claims of a JWT (RFC 7519) as far as a client needs them: it reads
/// `exp` to know when to refresh. The signature is the server's business;
/// a client never trusts claims for authorization, only for scheduling.
package struct JSONWebToken: Sendable {
    package let claims: [String: JSONValue]

    /// Parses the payload of a compact JWS (`header.payload.signature`);
    /// nil for anything else, such as an opaque token.
    package init?(_ token: String) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
              let payload = Base64URL.decode(parts[1]),
              case .object(let claims)? = try? JSONCodec.parse(payload)
        else { return nil }
        self.claims = claims
    }

    /// `exp`: seconds since 1970 (a NumericDate), if present.
    package var expiresAt: Double? { claims["exp"]?.doubleValue }
    /// `exp` exactly as written.
    package var expiry: JSONNumber? { claims["exp"]?.numberValue }
    package var subject: String? { claims["sub"]?.stringValue }
}
