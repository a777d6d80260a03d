import TetherJSON

extension TokenEndpoint {
    /// RFC 7009: asks the server to revoke `token` (a refresh token
    /// revokes its grant). 200 is success whether or not the server knew
    /// it (§2.2). The caller forgets the token either way.
    package nonisolated(nonsending) func revoke(_ token: String, hint: String, at url: String, timeout: Double = 5) async throws(TokenEndpointError) {
        let request = switch configuration.style {
        case .oauth2: OAuth2Requests.clientRequest(url, [("token", token), ("token_type_hint", hint)], configuration)
        case .json: Request(url: url, headers: [("Content-Type", "application/json"), ("Accept", "application/json")],
                            body: JSONCodec.serialize(.object(["refresh_token": .string(token)])))
        }
        let response = try await send(request, timeout: timeout)
        switch response.status {
        case 200..<300: return
        case 429, 500...: throw .serverUnavailable(status: response.status)
        default: throw OAuth2Requests.refusal(status: response.status, body: try? JSONCodec.parse(response.body))
        }
    }
}
