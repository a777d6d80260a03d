import TetherJSON

/// Where and as whom to ask for tokens, saved by `tether login` in the
/// credential store beside the tokens (the store is 0600: the client
/// secret is as sensitive as the tokens it obtains). Every process
/// refreshes the way it says: same style, same endpoints.
package struct AuthConfiguration: Sendable, Equatable, CustomStringConvertible {
    /// How the endpoint takes requests and answers them.
    package enum Style: String, Sendable, Equatable, CaseIterable {
        /// RFC 6749: form posts, client authentication, `error` codes.
        case oauth2
        /// A JSON contract (as FastAPI backends have): a JSON body with the
        /// user's name and password to log in, `{"refresh_token"}` to
        /// refresh, 401 or 403 for a session that is over.
        case json
    }

    package var style: Style
    package var tokenURL: String
    /// JSON style: where refreshes go (nil: the token URL).
    package var refreshURL: String?
    /// The client id; may be empty in the JSON style, which sends none.
    package var clientID: String
    package var clientSecret: String?
    /// The client secret lives in the keyring (`clientSecret` is nil until read).
    package var clientSecretInKeyring = false
    package var scope: String?
    /// JSON style: the login body's field names.
    package var usernameField: String
    package var passwordField: String
    /// Plain http:// to a host that is not loopback, allowed at login
    /// (`--insecure-http`) for a network the user trusts.
    package var allowsInsecureHTTP: Bool
    /// Where the SDK's authenticated requests may send the bearer token
    /// (`--api-origin`); empty: the token URL's origin.
    package var apiOrigins: [URLOrigin]
    /// Where `--issuer` discovery found the endpoints (shown, never re-read).
    package var issuer: String?
    /// RFC 8628's device authorization endpoint, RFC 7009's revocation endpoint.
    package var deviceURL: String?
    package var revokeURL: String?
    /// Seconds each token request may take in all (`--timeout`); nil: 30.
    package var requestTimeout: Double?

    package init(style: Style = .oauth2, tokenURL: String, refreshURL: String? = nil, clientID: String,
                 clientSecret: String? = nil, scope: String? = nil, usernameField: String = "username",
                 passwordField: String = "password", allowsInsecureHTTP: Bool = false, apiOrigins: [URLOrigin] = [],
                 issuer: String? = nil, deviceURL: String? = nil, revokeURL: String? = nil, requestTimeout: Double? = nil) {
        self.requestTimeout = requestTimeout
        self.apiOrigins = apiOrigins
        self.issuer = issuer
        self.deviceURL = deviceURL
        self.revokeURL = revokeURL
        self.style = style
        self.tokenURL = tokenURL
        self.refreshURL = refreshURL
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.scope = scope
        self.usernameField = usernameField
        self.passwordField = passwordField
        self.allowsInsecureHTTP = allowsInsecureHTTP
    }

    /// The origins a bearer token may be sent to.
    package var allowedOrigins: [URLOrigin] {
        apiOrigins.isEmpty ? URLOrigin(tokenURL).map { [$0] } ?? [] : apiOrigins
    }

    /// Why the access token may not go to `url`, or nil if it may: an
    /// allowed origin, over https or to this machine (unless plain http
    /// was allowed at login). A URL from shared defaults cannot send the
    /// user's token elsewhere.
    package func bearerRefusal(for url: String) -> String? {
        guard let origin = URLOrigin(url) else { return "not an http(s) URL" }
        guard allowedOrigins.contains(origin) else {
            let allowed = allowedOrigins.map(\.description).joined(separator: ", ")
            return "the access token goes only to \(allowed), not to \(origin) (tether login --api-origin ORIGIN allows more)"
        }
        if !origin.isSecure && !origin.isLoopback && !allowsInsecureHTTP {
            return "the access token does not go in clear to \(origin)"
        }
        return nil
    }

    /// Who `set` belongs to, as far as a client can tell: the server (the
    /// issuer, else the token URL's origin) and the JWT's `sub`, else the
    /// user name logged in with; nil when neither is known. Claims are not
    /// verified here: this decides whose data is shown, not who may act.
    package func userIdentity(of set: TokenSet) -> String? {
        guard let subject = JSONWebToken(set.accessToken)?.subject ?? set.subject else { return nil }
        return (issuer ?? URLOrigin(tokenURL)?.description ?? tokenURL) + " " + subject
    }

    /// Where a refresh goes.
    package var refreshEndpoint: String { style == .json ? refreshURL ?? tokenURL : tokenURL }

    package var description: String {
        "AuthConfiguration(style: \(style.rawValue), tokenURL: \(tokenURL), clientID: \(clientID), "
            + "clientSecret: \(clientSecret == nil ? "none" : "<redacted>"))"
    }

    package var jsonValue: JSONValue {
        var object: [String: JSONValue] = ["tokenURL": .string(tokenURL), "clientID": .string(clientID)]
        if let clientSecret { object["clientSecret"] = .string(clientSecret) }
        if clientSecretInKeyring { object["clientSecretIn"] = "keyring" }
        if let scope { object["scope"] = .string(scope) }
        // Only what differs from an older host's form, which it reads as oauth2.
        if style != .oauth2 {
            object["style"] = .string(style.rawValue)
            if let refreshURL { object["refreshURL"] = .string(refreshURL) }
            object["usernameField"] = .string(usernameField)
            object["passwordField"] = .string(passwordField)
        }
        if allowsInsecureHTTP { object["insecureHTTP"] = .bool(true) }
        if !apiOrigins.isEmpty { object["apiOrigins"] = .array(apiOrigins.map { .string($0.description) }) }
        if let issuer { object["issuer"] = .string(issuer) }
        if let deviceURL { object["deviceURL"] = .string(deviceURL) }
        if let revokeURL { object["revokeURL"] = .string(revokeURL) }
        if let requestTimeout { object["timeout"] = .number(JSONNumber(requestTimeout)) }
        return .object(object)
    }

    /// nil when `value` is not a stored configuration, or names a style
    /// this version does not know (a newer one's: better refused than
    /// refreshed the wrong way).
    package init?(_ value: JSONValue?) {
        guard let value, let tokenURL = value["tokenURL"]?.stringValue, let clientID = value["clientID"]?.stringValue,
              let style = Style(rawValue: value["style"]?.stringValue ?? Style.oauth2.rawValue)
        else { return nil }
        self.init(style: style, tokenURL: tokenURL, refreshURL: value["refreshURL"]?.stringValue, clientID: clientID,
                  clientSecret: value["clientSecret"]?.stringValue, scope: value["scope"]?.stringValue,
                  usernameField: value["usernameField"]?.stringValue ?? "username",
                  passwordField: value["passwordField"]?.stringValue ?? "password",
                  allowsInsecureHTTP: value["insecureHTTP"]?.boolValue ?? false,
                  apiOrigins: (value["apiOrigins"]?.arrayValue ?? []).compactMap { $0.stringValue.flatMap { URLOrigin(origin: $0) } },
                  issuer: value["issuer"]?.stringValue, deviceURL: value["deviceURL"]?.stringValue,
                  revokeURL: value["revokeURL"]?.stringValue,
                  requestTimeout: value["timeout"]?.doubleValue.flatMap { $0.isFinite && $0 > 0 ? min($0, 86_400) : nil })
        clientSecretInKeyring = value["clientSecretIn"]?.stringValue == "keyring"
    }
}
