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
            body = .object([configuration.usernameField: .string(username), configuration.passwordField: .string(password)])
        case .refreshToken(let token):
            url = configuration.refreshEndpoint
            body = .object(["refresh_token": .string(token)])
        case .clientCredentials:
            throw .badConfiguration("the JSON style has no client credentials grant")
        }
        return TokenEndpoint.Request(url: url, headers: [("Content-Type", "application/json"), ("Accept", "application/json")],
                                     body: JSONCodec.serialize(body))
    }

    /// A 4xx answer: 401 and 403 say the credentials are no good (a
    /// rotated or revoked refresh token, a wrong password).
    static func refusal(status: Int) -> TokenEndpointError {
        status == 401 || status == 403 ? .invalidGrant : .rejected(status: status, code: "no error code")
    }
}
