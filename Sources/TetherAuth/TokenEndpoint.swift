import TetherJSON
import TetherLoop

/// An OAuth 2.0 token endpoint client (RFC 6749): password,
/// client_credentials and refresh_token grants as form-encoded POSTs, the
/// client authenticated with HTTP Basic (`client_secret_basic`, §2.3.1) when
/// it has a secret, else identified by `client_id` in the form (a public
/// client). `HTTPExchange` carries the requests.
public struct TokenEndpoint: Sendable, CustomStringConvertible {
    public enum Grant: Sendable {
        case password(username: String, password: String)
        case clientCredentials
        case refreshToken(String)
    }

    public let configuration: AuthConfiguration
    /// Seconds before a request counts as unreachable.
    public var timeout: Double

    public init(configuration: AuthConfiguration, timeout: Double = 10) {
        self.configuration = configuration
        self.timeout = timeout
    }

    public var description: String { "TokenEndpoint(\(configuration))" }

    /// Asks for a token set. `now` stamps `expires_in` answers.
    public func request(_ grant: Grant, now: Double = WallClock.now()) async throws(TokenEndpointError) -> TokenSet {
        var headers = [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")]
        var form: [(String, String)]
        switch grant {
        case .password(let username, let password):
            form = [("grant_type", "password"), ("username", username), ("password", password)]
        case .clientCredentials:
            form = [("grant_type", "client_credentials")]
        case .refreshToken(let token):
            form = [("grant_type", "refresh_token"), ("refresh_token", token)]
        }
        if let scope = configuration.scope, !scope.isEmpty { form.append(("scope", scope)) }
        if let secret = configuration.clientSecret {
            let credentials = Self.formEncode(configuration.clientID) + ":" + Self.formEncode(secret)
            headers.append(("Authorization", "Basic " + Base64URL.encodeStandard(Array(credentials.utf8))))
        } else {
            form.append(("client_id", configuration.clientID))
        }
        let encoded = Array(form.map { Self.formEncode($0.0) + "=" + Self.formEncode($0.1) }.joined(separator: "&").utf8)

        let response: HTTPExchange.Response
        do throws(HTTPExchange.Failure) {
            response = try await HTTPExchange.send("POST", configuration.tokenURL, headers: headers, body: encoded, timeout: timeout)
        } catch .badURL {
            throw .badConfiguration("the token URL is not an http(s) URL")
        } catch {
            throw .unreachable(error.description)
        }
        let body = try? JSONCodec.parse(response.body)
        switch response.status {
        case 200..<300:
            guard let accessToken = body?["access_token"]?.stringValue, !accessToken.isEmpty else {
                throw .serverUnavailable(status: response.status)  // a 2xx without a token: a broken server, not our credentials
            }
            let expiry = JSONWebToken(accessToken)?.expiry ?? body?["expires_in"]?.doubleValue.map { JSONNumber(now + $0) }
            return TokenSet(accessToken: accessToken, refreshToken: body?["refresh_token"]?.stringValue,
                            expiry: expiry, tokenType: body?["token_type"]?.stringValue ?? "Bearer",
                            scope: body?["scope"]?.stringValue, receivedAt: now)
        case 429, 500...:
            throw .serverUnavailable(status: response.status)
        default:
            switch body?["error"]?.stringValue {
            case "invalid_grant": throw .invalidGrant
            case "invalid_client": throw .invalidClient
            case let code?: throw .rejected(status: response.status, code: Self.printable(code))
            case nil where response.status == 401: throw .invalidClient
            case nil: throw .rejected(status: response.status, code: "no error code")
            }
        }
    }

    /// application/x-www-form-urlencoded (HTML's rules, as RFC 6749 §2.3.1 asks for the Basic credentials too).
    static func formEncode(_ text: String) -> String {
        var output = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                 UInt8(ascii: "_"), UInt8(ascii: "*"):
                output.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: " "):
                output += "+"
            default:
                output += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return output
    }

    /// A server's error code, shown to the user, limited to what RFC 6749 allows in it.
    private static func printable(_ code: String) -> String {
        String(code.unicodeScalars.filter { $0.value >= 0x20 && $0.value < 0x7f && $0 != "\"" && $0 != "\\" }.prefix(64))
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
