import TetherJSON

/// RFC 6749 requests: password, client_credentials and refresh_token grants
/// as form-encoded POSTs to the token URL, the client authenticated with
/// HTTP Basic (`client_secret_basic`, §2.3.1) when it has a secret, else
/// identified by `client_id` in the form (a public client). Refusals are
/// read from the `error` code (§5.2).
enum OAuth2Requests {
    static func request(_ grant: TokenEndpoint.Grant, _ configuration: AuthConfiguration) -> TokenEndpoint.Request {
        var form: [(String, String)]
        switch grant {
        case .password(let username, let password):
            form = [("grant_type", "password"), ("username", username), ("password", password)]
        case .clientCredentials:
            form = [("grant_type", "client_credentials")]
        case .refreshToken(let token):
            form = [("grant_type", "refresh_token"), ("refresh_token", token)]
        case .deviceCode(let code):
            form = [("grant_type", "urn:ietf:params:oauth:grant-type:device_code"), ("device_code", code)]
        }
        if let scope = configuration.scope, !scope.isEmpty, !grant.isDeviceCode { form.append(("scope", scope)) }
        return clientRequest(configuration.tokenURL, form, configuration)
    }

    /// A form POST from the client: authenticated with HTTP Basic when it
    /// has a secret, else naming itself with `client_id` (token, device
    /// authorization and revocation requests alike).
    static func clientRequest(_ url: String, _ form: [(String, String)], _ configuration: AuthConfiguration)
        -> TokenEndpoint.Request {
        var form = form
        var headers = [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")]
        if let secret = configuration.clientSecret {
            let credentials = formEncode(configuration.clientID) + ":" + formEncode(secret)
            headers.append(("Authorization", "Basic " + Base64URL.encodeStandard(Array(credentials.utf8))))
        } else {
            form.append(("client_id", configuration.clientID))
        }
        let encoded = Array(form.map { formEncode($0.0) + "=" + formEncode($0.1) }.joined(separator: "&").utf8)
        return TokenEndpoint.Request(url: url, headers: headers, body: encoded)
    }

    /// A 4xx answer, by its `error` code.
    static func refusal(status: Int, body: JSONValue?) -> TokenEndpointError {
        switch body?["error"]?.stringValue {
        case "invalid_grant": .invalidGrant
        case "invalid_client": .invalidClient
        case let code?: .rejected(status: status, code: printable(code))
        case nil where status == 401: .invalidClient
        case nil: .rejected(status: status, code: "no error code")
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
    static func printable(_ code: String) -> String {
        String(code.unicodeScalars.filter { $0.value >= 0x20 && $0.value < 0x7f && $0 != "\"" && $0 != "\\" }.prefix(64))
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
