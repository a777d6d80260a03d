import TetherHTTP
import TetherJSON
import TetherLoop

/// A token endpoint client. The style (`AuthConfiguration.Style`) builds
/// each request and classifies each refusal: RFC 6749 form posts
/// (`OAuth2Requests`) or a JSON contract (`JSONContractRequests`). What
/// they share is here: the transport rule, the request, and reading a
/// token answer. An `HTTPClient` carries the requests (`TokenTransport`).
package struct TokenEndpoint: Sendable, CustomStringConvertible {
    package enum Grant: Sendable {
        case password(username: String, password: String)
        case clientCredentials
        case refreshToken(String)
        /// RFC 8628: the device code of an authorization the user approved.
        case deviceCode(String)

        var isDeviceCode: Bool { if case .deviceCode = self { true } else { false } }
    }

    /// One request as a style builds it.
    struct Request {
        var url: String
        var headers: [(String, String)]
        var body: [UInt8]
    }

    package let configuration: AuthConfiguration
    let transport: any TokenTransport
    /// Seconds a request may take in all before it counts as unreachable:
    /// given, else the login's `--timeout`, else 30.
    package var timeout: Double

    package init(configuration: AuthConfiguration, http: HTTPClient, timeout: Double? = nil) {
        self.init(configuration: configuration, transport: http, timeout: timeout)
    }

    init(configuration: AuthConfiguration, transport: any TokenTransport, timeout: Double? = nil) {
        self.configuration = configuration
        self.transport = transport
        self.timeout = timeout ?? configuration.requestTimeout ?? HTTPRequest.defaultTimeout
    }

    package var description: String { "TokenEndpoint(\(configuration))" }

    /// Why `url` may not carry credentials, or nil if it may: it must be
    /// https, or http to this machine, unless the user allowed plain http.
    package static func transportRefusal(_ url: String, allowsInsecureHTTP: Bool) -> String? {
        guard let origin = URLOrigin(url) else { return "\(OAuth2Requests.printable(url)) is not an http(s) URL" }
        if origin.isSecure || origin.isLoopback || allowsInsecureHTTP { return nil }
        return "refusing to send credentials in clear to \(origin): use https://, or --insecure-http on a network you trust"
    }

    /// Asks for a token set. `now` stamps `expires_in` answers.
    package nonisolated(nonsending) func request(_ grant: Grant, now: Double = WallClock.now()) async throws(TokenEndpointError) -> TokenSet {
        let (tokens, problem) = try await answer(grant, now: now)
        if let problem { throw problem }
        return tokens
    }

    /// The set a 2xx answer issued, and what else in it could not be read
    /// (an `expires_in` that is no number): a refresh must keep a rotated
    /// refresh token even then, so the set comes back with the problem. Such
    /// a set expires on arrival, so it is never trusted for longer.
    package nonisolated(nonsending) func answer(_ grant: Grant, now: Double = WallClock.now())
        async throws(TokenEndpointError) -> (tokens: TokenSet, problem: TokenEndpointError?) {
        let request = switch configuration.style {
        case .oauth2: OAuth2Requests.request(grant, configuration)
        case .json: try JSONContractRequests.request(grant, configuration)
        }
        let response = try await send(request)
        let body = try? JSONCodec.parse(response.body)
        switch response.status {
        case 200..<300:
            guard let given = body?["access_token"]?.stringValue, !given.isEmpty else {
                throw .serverUnavailable(status: response.status)  // a 2xx without a token: a broken server, not our credentials
            }
            // RFC 6749's tokens are visible ASCII: one holding a line break
            // or an escape would end up in a header or on a terminal. A
            // refresh token of that kind cannot be kept; the rest can be
            // mended, so that a rotated refresh token is never lost.
            func unusable(_ field: String) -> TokenEndpointError {
                .malformedAnswer("its \(field) holds a character no token may (a control character or beyond ASCII)")
            }
            let refreshToken = body?["refresh_token"]?.stringValue
            if let refreshToken, !Self.isVisibleASCII(refreshToken) { throw unusable("refresh_token") }
            var problem: TokenEndpointError?
            var accessToken = given
            if !Self.isVisibleASCII(accessToken) {
                guard refreshToken != nil else { throw unusable("access_token") }
                // Kept expired, its bad characters gone: the next use refreshes.
                let kept = String(decoding: accessToken.utf8.filter { (0x21...0x7E).contains($0) }, as: UTF8.self)
                accessToken = kept.isEmpty ? "unusable" : kept
                problem = unusable("access_token")
            }
            var tokenType = body?["token_type"]?.stringValue, scope = body?["scope"]?.stringValue
            if let type = tokenType, !Self.isVisibleASCII(type) { tokenType = nil; problem = problem ?? unusable("token_type") }
            if let named = scope, !Self.isVisibleASCII(named) { scope = nil; problem = problem ?? unusable("scope") }
            var expiry = problem == nil ? JSONWebToken(accessToken)?.expiry : JSONNumber(now)
            if expiry == nil, let given = body?["expires_in"] {
                if let seconds = Self.seconds(given) {
                    expiry = JSONNumber(now + seconds)
                } else {
                    expiry = JSONNumber(now)
                    let shown = OAuth2Requests.printable(given.stringValue ?? given.description)
                    problem = .malformedAnswer("expires_in (\(shown)) is not a number of seconds")
                }
            }
            let tokens = TokenSet(accessToken: accessToken, refreshToken: refreshToken,
                                  expiry: expiry, tokenType: tokenType ?? "Bearer", scope: scope, receivedAt: now)
            return (tokens, problem)
        case 429, 500...:
            throw .serverUnavailable(status: response.status)
        default:
            throw switch configuration.style {
            case .oauth2: OAuth2Requests.refusal(status: response.status, body: body)
            case .json: JSONContractRequests.refusal(status: response.status, body: body)
            }
        }
    }

    /// Whether every character of `text` is printable ASCII (RFC 6749's
    /// VSCHAR, the space included for a scope's list).
    static func isVisibleASCII(_ text: String) -> Bool {
        text.utf8.allSatisfy { (0x20...0x7E).contains($0) }
    }

    /// `expires_in` as seconds: a JSON number, or a string of decimal digits
    /// (some servers quote it); negative counts as already expired.
    static func seconds(_ value: JSONValue) -> Double? {
        if let number = value.doubleValue { return number.isFinite ? max(0, number) : nil }
        guard let text = value.stringValue, text.wholeMatch(of: /[0-9]{1,12}(\.[0-9]{1,9})?/) != nil else { return nil }
        return Double(text)
    }

    /// Sends one request a style built, after the transport rule.
    nonisolated(nonsending) func send(_ request: Request, timeout: Double? = nil) async throws(TokenEndpointError) -> HTTPResponse {
        if let refusal = Self.transportRefusal(request.url, allowsInsecureHTTP: configuration.allowsInsecureHTTP) {
            throw .badConfiguration(refusal)
        }
        do throws(HTTPFailure) {
            return try await transport.post(request.url, headers: request.headers, body: request.body,
                                            timeout: timeout.map { min($0, self.timeout) } ?? self.timeout)
        } catch .badURL {
            throw .badConfiguration("\(OAuth2Requests.printable(request.url)) is not an http(s) URL")
        } catch {
            throw .unreachable(error.description)
        }
    }
}
