import TetherJSON

/// Where and as whom to ask for tokens, saved by `tether login` in the
/// credential store beside the tokens (the store is 0600: the client
/// secret is as sensitive as the tokens it obtains).
public struct AuthConfiguration: Sendable, Equatable, CustomStringConvertible {
    public var tokenURL: String
    public var clientID: String
    public var clientSecret: String?
    public var scope: String?

    public init(tokenURL: String, clientID: String, clientSecret: String? = nil, scope: String? = nil) {
        self.tokenURL = tokenURL
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.scope = scope
    }

    public var description: String {
        "AuthConfiguration(tokenURL: \(tokenURL), clientID: \(clientID), clientSecret: \(clientSecret == nil ? "none" : "<redacted>"))"
    }

    public var jsonValue: JSONValue {
        var object: [String: JSONValue] = ["tokenURL": .string(tokenURL), "clientID": .string(clientID)]
        if let clientSecret { object["clientSecret"] = .string(clientSecret) }
        if let scope { object["scope"] = .string(scope) }
        return .object(object)
    }

    public init?(_ value: JSONValue?) {
        guard let value, let tokenURL = value["tokenURL"]?.stringValue, let clientID = value["clientID"]?.stringValue
        else { return nil }
        self.init(tokenURL: tokenURL, clientID: clientID, clientSecret: value["clientSecret"]?.stringValue,
                  scope: value["scope"]?.stringValue)
    }
}
