import TetherHTTP
import TetherJSON

/// An authorization server's published endpoints (RFC 8414; OpenID
/// Connect Discovery 1.0 for servers that publish only that document).
package struct AuthorizationServerMetadata: Sendable, Equatable {
    package let issuer: String
    package let tokenEndpoint: String
    package let deviceAuthorizationEndpoint: String?
    package let revocationEndpoint: String?

    /// Why discovery found nothing usable, in one sentence.
    package struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
        package let description: String
    }

    /// Reads `/.well-known/oauth-authorization-server`, then
    /// `/.well-known/openid-configuration`. The document must name the
    /// issuer asked for (RFC 8414 §3.3: else another server could pose
    /// as it), and every endpoint must satisfy the transport rule.
    package nonisolated(nonsending) static func discover(issuer: String, allowsInsecureHTTP: Bool, http: HTTPClient,
                                timeout: Double = HTTPRequest.defaultTimeout) async throws(Failure)
        -> AuthorizationServerMetadata {
        if let refusal = TokenEndpoint.transportRefusal(issuer, allowsInsecureHTTP: allowsInsecureHTTP) {
            throw Failure(description: refusal)
        }
        let trimmed = issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
        guard let origin = URLOrigin(trimmed), !trimmed.contains("?"), !trimmed.contains("#"), !trimmed.contains("@") else {
            throw Failure(description: "the issuer is not an https URL without user, query or fragment")
        }
        // RFC 8414 §3.1: the well-known part goes between the host and the
        // issuer's path; OIDC appends it to the issuer.
        let path = String(trimmed.dropFirst(trimmed.prefix { $0 != ":" }.count + 3).drop { $0 != "/" })
        let candidates = [origin.description + "/.well-known/oauth-authorization-server" + path,
                          trimmed + "/.well-known/openid-configuration"]
        var reasons: [String] = []
        for url in candidates {
            let response: HTTPResponse
            do throws(HTTPFailure) {
                response = try await http.send("GET", url, headers: [("Accept", "application/json")], timeout: timeout,
                                                       maximumBody: 1 << 20)
            } catch {
                throw Failure(description: "cannot read the discovery document at \(url): \(error)")
            }
            guard (200..<300).contains(response.status) else {
                reasons.append("\(url): HTTP \(response.status)")
                continue
            }
            guard let body = try? JSONCodec.parse(response.body), case .object = body else {
                reasons.append("\(url): not a JSON object")  // a catch-all page, say: the other document may be there
                continue
            }
            let named = body["issuer"]?.stringValue ?? ""
            guard named == issuer || named == trimmed || named == trimmed + "/" else {
                throw Failure(description: "the discovery document at \(url) names another issuer, \(OAuth2Requests.printable(named))")
            }
            guard let token = body["token_endpoint"]?.stringValue else {
                throw Failure(description: "the discovery document at \(url) names no token_endpoint")
            }
            let metadata = AuthorizationServerMetadata(
                issuer: issuer, tokenEndpoint: token,
                deviceAuthorizationEndpoint: body["device_authorization_endpoint"]?.stringValue,
                revocationEndpoint: body["revocation_endpoint"]?.stringValue)
            for endpoint in [metadata.tokenEndpoint, metadata.deviceAuthorizationEndpoint, metadata.revocationEndpoint]
                .compactMap({ $0 }) {
                // Shown by token status and in errors: nothing a terminal would act on.
                guard endpoint.utf8.count <= 2048, endpoint.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else {
                    throw Failure(description: "the discovery document at \(url) has an endpoint that is not a plain URL")
                }
                if let refusal = TokenEndpoint.transportRefusal(endpoint, allowsInsecureHTTP: allowsInsecureHTTP) {
                    throw Failure(description: "the discovery document at \(url): \(refusal)")
                }
            }
            return metadata
        }
        throw Failure(description: "no discovery document for \(issuer) (\(reasons.joined(separator: "; ")))")
    }
}
