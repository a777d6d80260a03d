import TetherJSON

/// Requests of a JSON contract, as FastAPI-style backends have
/// (`POST /v1/auth/login_password` with `{"identifier","password"}`,
/// `POST /v1/auth/refresh` with `{"refresh_token"}`): JSON bodies, no client
/// authentication, and a session that is over answered with 401 or 403
/// (FastAPI's `{"detail": ...}`, never shown: it may echo what was sent).
enum JSONContractRequests {
    static func request(_ grant: TokenEndpoint.Grant, _ configuration: AuthConfiguration)
        throws(TokenEndpointError) -> TokenEndpoint.Request {
        let url: String
        let body: JSONValue
        switch grant {
        case .password(let username, let password):
            url = configuration.tokenURL
            // Not a dictionary literal: equal field names (a hand-edited
            // store) would trap there.
            var fields: [String: JSONValue] = [:]
            fields[configuration.usernameField] = .string(username)
            fields[configuration.passwordField] = .string(password)
            body = .object(fields)
        case .refreshToken(let token):
            url = configuration.refreshEndpoint
            body = .object(["refresh_token": .string(token)])
        case .clientCredentials, .deviceCode:
            throw .badConfiguration("the JSON style has only password logins")
        }
        return TokenEndpoint.Request(url: url, headers: [("Content-Type", "application/json"), ("Accept", "application/json")],
                                     body: JSONCodec.serialize(body))
    }

    /// A 4xx answer: 401, and 403 from the backend itself (a JSON body),
    /// say the credentials are no good (a rotated or revoked refresh token, a
    /// wrong password). A 403 page from a proxy or firewall in between says
    /// nothing about the session, so it does not end it.
    static func refusal(status: Int, body: JSONValue?) -> TokenEndpointError {
        switch status {
        case 401: .invalidGrant
        case 403: if case .object = body { .invalidGrant } else { .rejected(status: status, code: "not from the backend") }
        default: .rejected(status: status, code: "no error code")
        }
    }
}
