import Foundation

/// The server's access tokens: JWTs (RFC 7519) whose claims clients read
/// (`exp`, `sub`) as they would a signed one's, unsecured (§6, "alg":
/// "none") because this server accepts only tokens it issued: it keeps each
/// until it expires. A signature would prove nothing more here, and would
/// cost every build a crypto library (swift-crypto compiles BoringSSL: some
/// two and a half minutes of each CI run).
struct AccessTokens: Sendable {
    struct Claims: Codable, Sendable {
        var sub: String
        var exp: Int
        var iat: Int
        var jti: String
        var fam: String?
    }

    private var issued: [String: Claims] = [:]
    private static let header = base64URL(Data(#"{"alg":"none","typ":"JWT"}"#.utf8))

    /// A new token for `claims`; expired ones are forgotten meanwhile.
    mutating func issue(_ claims: Claims, now: Date = Date()) throws -> String {
        let seconds = now.timeIntervalSince1970
        issued = issued.filter { Double($0.value.exp) > seconds }
        let token = Self.header + "." + Self.base64URL(try JSONEncoder().encode(claims)) + "."
        issued[token] = claims
        return token
    }

    /// The claims of a token this server issued that has not expired, else nil.
    func verify(_ token: String, now: Date = Date()) -> Claims? {
        guard let claims = issued[token], Double(claims.exp) > now.timeIntervalSince1970 else { return nil }
        return claims
    }

    private static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
