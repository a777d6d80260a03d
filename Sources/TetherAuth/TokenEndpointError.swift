/// How a token request failed, classified the way RFC 6749 §5.2 and the
/// retry policy need it. No case carries a token, password or secret: only
/// HTTP statuses and the server's error code.
package enum TokenEndpointError: Error, Equatable, Sendable, CustomStringConvertible {
    /// 400 `invalid_grant`: the refresh token (or password) is no longer
    /// good. Ends a session, but only after checking nobody rotated it.
    case invalidGrant
    /// 401 `invalid_client`: the client id or secret is wrong. Nothing is
    /// wiped; the configuration needs fixing.
    case invalidClient
    /// Another 4xx error code (`invalid_request`, `invalid_scope`, ...).
    case rejected(status: Int, code: String)
    /// 5xx, 429, or a response that could not be read: worth retrying.
    case serverUnavailable(status: Int)
    /// No answer: refused, unreachable, or timed out. Worth retrying.
    case unreachable(String)
    /// The configuration cannot make a request (a malformed URL, say).
    case badConfiguration(String)
    /// A 2xx answer with a field that cannot be read (`expires_in: "soon"`).
    case malformedAnswer(String)

    /// True for failures that say nothing about the credentials.
    package var isTransient: Bool {
        switch self {
        case .serverUnavailable, .unreachable: true
        default: false
        }
    }

    package var description: String {
        switch self {
        case .invalidGrant: "the server refused the grant (invalid_grant): the session is no longer valid"
        case .invalidClient: "the server refused the client (invalid_client): check the client id and secret"
        case .rejected(let status, let code): "the server refused the request (HTTP \(status), \(code))"
        case .serverUnavailable(let status): "the token server is unavailable (HTTP \(status))"
        case .unreachable(let reason): "cannot reach the token server: \(reason)"
        case .badConfiguration(let reason): "cannot ask for a token: \(reason)"
        case .malformedAnswer(let reason): "the token server's answer cannot be used: \(reason)"
        }
    }
}
