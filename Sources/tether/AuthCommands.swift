import ArgumentParser
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import TetherAuth
import TetherGroup

extension CLIError {
    init(_ error: AuthError) {
        switch error {
        case .notAuthenticated, .sessionEnded, .cannotRefresh, .refused, .noHost:
            self.init(code: .refused, message: error.description)
        case .temporarilyUnavailable, .refreshStalled:
            self.init(code: .environment, message: error.description)
        case .store(let error):
            self.init(error)
        }
    }

    init(_ error: TokenEndpointError) {
        switch error {
        case .invalidGrant, .invalidClient, .rejected:
            self.init(code: .refused, message: error.description)
        case .badConfiguration:
            self.init(code: .badInput, message: error.description)
        case .serverUnavailable, .unreachable:
            self.init(code: .environment, message: error.description)
        }
    }
}

extension AuthConfiguration.Style: ExpressibleByArgument {}

struct Login: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Obtain tokens from a token endpoint and store them for the whole group.",
        discussion: """
            With --username, the password is read from standard input (one line), never from \
            arguments or the environment. The client secret, if any, is read from a file. Tokens, \
            the client id and secret are kept in GROUP/credentials.json (mode 0600), with the \
            endpoint style and URLs: every process refreshes the same way. With a client secret, \
            an OAuth 2.0 user login also obtains a client token, which logout keeps.
            Credentials go only over https://, or plain http:// to this machine (localhost, \
            127.0.0.0/8, ::1); --insecure-http allows plain http:// elsewhere.

            --style oauth2 (the default): RFC 6749 form posts; a refusal is read from its error code.
            Example: printf '%s\\n' "$PASSWORD" | tether login --token-url https://auth.example.com/token \
            --client-id my-app --username alice --password-stdin

            --style json: a JSON contract (FastAPI-style backends): the login body is \
            {USERNAME_FIELD: U, PASSWORD_FIELD: P}, a refresh {"refresh_token": RT} to --refresh-url, \
            and 401 or 403 ends the session.
            Example: printf '%s\\n' "$PASSWORD" | tether login --style json --token-url \
            https://api.example.com/v1/auth/login_password --refresh-url https://api.example.com/v1/auth/refresh \
            --username-field identifier --username courier --password-stdin
            """
    )

    @Option(help: ArgumentHelp("oauth2 (RFC 6749 form posts) or json (JSON bodies).", valueName: "STYLE"))
    var style: AuthConfiguration.Style = .oauth2
    @Option(help: ArgumentHelp("The token endpoint (json: the login endpoint), an http(s) URL.", valueName: "URL"))
    var tokenURL: String
    @Option(help: ArgumentHelp("json: where refreshes go (default: the token URL).", valueName: "URL"))
    var refreshURL: String?
    @Option(help: ArgumentHelp("json: the login body's user name field (default: username).", valueName: "NAME"))
    var usernameField: String?
    @Option(help: ArgumentHelp("json: the login body's password field (default: password).", valueName: "NAME"))
    var passwordField: String?
    @Option(help: ArgumentHelp("The client id (oauth2: required).", valueName: "ID")) var clientID: String?
    @Option(help: ArgumentHelp("A file holding the client secret (oauth2, client_secret_basic).", valueName: "PATH"))
    var clientSecretFile: String?
    @Option(help: ArgumentHelp("Log in as this user (password grant).", valueName: "U")) var username: String?
    @Flag(help: "Read the user's password from standard input.") var passwordStdin = false
    @Flag(help: "Log in as the client itself (oauth2: client_credentials grant).") var clientCredentials = false
    @Option(help: ArgumentHelp("The scope to ask for (oauth2).", valueName: "S")) var scope: String?
    @Flag(help: "Allow plain http:// to a host other than this machine (credentials travel in clear).")
    var insecureHTTP = false
    @Option(help: ArgumentHelp("An origin (https://host[:port]) the SDK may send the access token to; repeatable. Default: the token URL's.",
                               valueName: "ORIGIN"))
    var apiOrigin: [String] = []
    @OptionGroup var group: GroupOptions

    func validate() throws {
        if clientCredentials && (username != nil || passwordStdin) {
            throw ValidationError("use either --username with --password-stdin, or --client-credentials, not both")
        }
        if !clientCredentials && (username == nil || !passwordStdin) {
            throw ValidationError("use --username U --password-stdin (the password on standard input), or --client-credentials")
        }
        switch style {
        case .oauth2:
            if clientID == nil { throw ValidationError("--style oauth2 needs --client-id") }
            for (given, name) in [(refreshURL != nil, "--refresh-url"), (usernameField != nil, "--username-field"),
                                  (passwordField != nil, "--password-field")] where given {
                throw ValidationError("\(name) is for --style json")
            }
        case .json:
            if clientCredentials { throw ValidationError("--style json has no client credentials grant: use --username") }
            if clientSecretFile != nil { throw ValidationError("--client-secret-file is for --style oauth2") }
            if scope != nil { throw ValidationError("--scope is for --style oauth2") }
            for field in [usernameField, passwordField].compactMap({ $0 })
            where field.allSatisfy({ $0.isWhitespace }) {
                throw ValidationError("a field name cannot be empty")
            }
            if (usernameField ?? "username") == (passwordField ?? "password") {
                throw ValidationError("--username-field and --password-field name the same field; give two names")
            }
        }
        for origin in apiOrigin {
            guard URLOrigin(origin: origin) != nil else {
                throw ValidationError("--api-origin \(origin) is not an origin: give scheme://host[:port], as https://api.example.com")
            }
        }
        for url in [tokenURL, refreshURL].compactMap({ $0 }) + apiOrigin {
            if let refusal = TokenEndpoint.transportRefusal(url, allowsInsecureHTTP: insecureHTTP) {
                throw ValidationError(refusal)
            }
        }
    }

    func run() throws {
        let secret = try clientSecretFile.map(readSecretFile)
        let password = passwordStdin ? readLine(strippingNewline: true) : nil
        if passwordStdin, password?.isEmpty ?? true {
            throw CLIError.badInput("no password on standard input: pipe it in, as in printf '%s\\n' \"$PASSWORD\" | tether login ...")
        }
        let clientID = clientID ?? ""
        let configuration = AuthConfiguration(style: style, tokenURL: tokenURL, refreshURL: refreshURL, clientID: clientID,
                                              clientSecret: secret, scope: scope,
                                              usernameField: usernameField ?? "username",
                                              passwordField: passwordField ?? "password",
                                              allowsInsecureHTTP: insecureHTTP,
                                              apiOrigins: apiOrigin.compactMap { URLOrigin(origin: $0) })
        let directory = try group.open()
        let store = try CredentialStore(group: directory)
        let endpoint = TokenEndpoint(configuration: configuration)
        let username = username
        let (user, client) = try runAsync { () async throws -> (TokenSet?, TokenSet?) in
            do throws(TokenEndpointError) {
                if let username, let password {
                    var user = try await endpoint.request(.password(username: username, password: password))
                    user.subject = username
                    // The client token is a convenience: a server may not allow the grant.
                    let client = secret == nil ? nil : try? await endpoint.request(.clientCredentials)
                    return (user, client)
                }
                return (nil, try await endpoint.request(.clientCredentials))
            } catch .invalidGrant where password != nil {
                let why = configuration.style == .json ? "HTTP 401 or 403" : "invalid_grant"
                throw CLIError.refused("the server refused the user name or password (\(why))")
            } catch {
                throw CLIError(error)
            }
        }
        // Under the refresh lock, so a login never interleaves with a refresh.
        let lock = try ExclusiveLock.acquire(path: try directory.preparedRefreshLockPath())
        defer { lock.release() }
        try store.shared.update { values in
            let previous = AuthConfiguration(values["configuration"])
            values["configuration"] = configuration.jsonValue
            values[TokenKind.user.rawValue] = user?.jsonValue
            if let client {
                values[TokenKind.client.rawValue] = client.jsonValue
            } else if previous.map({ ($0.style, $0.tokenURL, $0.clientID) != (style, tokenURL, clientID) }) ?? true {
                // Another server's or client's token: it could not be renewed here.
                values.removeValue(forKey: TokenKind.client.rawValue)
            }
        }
        let set = user ?? client
        let validity = set?.expiresAt.map { " (access token valid for \(max(0, Int(($0 - Date().timeIntervalSince1970).rounded()))) s)" } ?? ""
        if let username, user != nil {
            output("logged in as \(username): userAuthenticated\(validity)")
        } else {
            output("logged in as client \(clientID): clientAuthenticated\(validity)")
        }
    }

    private func readSecretFile(_ path: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CLIError.badInput("cannot read the client secret file \(path)")
        }
        let secret = String(decoding: data, as: UTF8.self).trimmed
        guard !secret.isEmpty else { throw CLIError.badInput("the client secret file \(path) is empty") }
        return secret
    }
}

struct Logout: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logout",
        abstract: "End the user session in every process of the group; the client token is kept.")
    @OptionGroup var group: GroupOptions

    func run() throws {
        let directory = try group.open()
        let store = try CredentialStore(group: directory)
        let lock = try ExclusiveLock.acquire(path: try directory.preparedRefreshLockPath())
        defer { lock.release() }
        let hadUser = try store.shared.update { $0.removeValue(forKey: TokenKind.user.rawValue) != nil }
        let state = try store.snapshot().state
        output(hadUser ? "logged out: \(state.rawValue)" : "no user was logged in: \(state.rawValue)")
    }
}
