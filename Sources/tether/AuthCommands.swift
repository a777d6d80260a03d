import TetherJSON
import ArgumentParser
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Logging
import TetherAuth
import TetherGroup
import TetherHTTP
import TetherLog
import TetherLoop

extension CLIError {
    init(_ error: AuthError) {
        switch error {
        case .refused(.malformedAnswer):  // the server is broken, not our credentials
            self.init(code: .environment, message: error.description)
        case .notAuthenticated, .sessionEnded, .cannotRefresh, .refused, .noHost:
            self.init(code: .refused, message: error.description)
        case .temporarilyUnavailable, .refreshStalled, .keyring:
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
        case .serverUnavailable, .unreachable, .malformedAnswer:
            self.init(code: .environment, message: error.description)
        }
    }
}

extension AuthError {
    /// What a command throws for a session's failure: one of the store as
    /// the group error it is (told and coded as every command tells it).
    var thrown: any Error {
        if case .store(let error) = self { error } else { self }
    }
}

extension AuthConfiguration.Style: ExpressibleByArgument {}

struct Login: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Obtain tokens from a token endpoint and store them for the whole group.",
        discussion: """
            With --username, the password is read from standard input (one line), never from \
            arguments or the environment. The client secret, if any, is read from a file. The \
            refresh tokens and the client secret go where --store says: the user's keyring (the \
            freedesktop Secret Service: GNOME Keyring, KWallet), or the group's credentials file. \
            The rest (the access tokens, the client id, the endpoint style and URLs) is kept beside \
            the group, in PARENT/.NAME.secrets/credentials.json (mode 0600; no read-only extension \
            can read it): every process refreshes the same way. A login moves the secrets to the \
            store it names and leaves no copy in the other. With a client secret, \
            an OAuth 2.0 user login also obtains a client token, which logout keeps.
            Credentials go only over https://, or plain http:// to this machine (localhost, \
            127.0.0.0/8, ::1); --insecure-http allows plain http:// elsewhere.

            --style oauth2 (the default): RFC 6749 form posts; a refusal is read from its error code.
            Example: printf '%s\\n' "$PASSWORD" | tether login --token-url https://auth.example.com/token \
            --client-id my-app --username alice --password-stdin

            --device: the device authorization grant (RFC 8628) for a machine without a browser: \
            it prints a URL and a code to enter there from another device, then waits for approval.
            Example: tether login --device --issuer https://auth.example.com --client-id my-app

            --issuer URL reads the server's endpoints from its discovery document (RFC 8414, \
            then OpenID Connect); URLs given as options take precedence.

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
    @Option(help: ArgumentHelp("The token endpoint (json: the login endpoint), an http(s) URL; or --issuer.", valueName: "URL"))
    var tokenURL: String?
    @Option(help: ArgumentHelp("oauth2: the authorization server, to discover its endpoints.", valueName: "URL"))
    var issuer: String?
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
    @Flag(help: "Log in from another device (oauth2: device authorization grant, RFC 8628).") var device = false
    @Option(help: ArgumentHelp("The device authorization endpoint (default: discovered with --issuer).", valueName: "URL"))
    var deviceURL: String?
    @Option(help: ArgumentHelp("Where logout revokes the refresh token (RFC 7009; default: discovered).", valueName: "URL"))
    var revokeURL: String?
    @Option(help: ArgumentHelp("The scope to ask for (oauth2).", valueName: "S")) var scope: String?
    @Flag(help: "Allow plain http:// to a host other than this machine (credentials travel in clear).")
    var insecureHTTP = false
    @Option(help: ArgumentHelp("An origin (https://host[:port]) the SDK may send the access token to; repeatable. Default: the token URL's.",
                               valueName: "ORIGIN"))
    var apiOrigin: [String] = []
    @Option(help: ArgumentHelp("Seconds each token request may take in all, slow answers included (default 30); kept for every process's refreshes.",
                               valueName: "S"))
    var timeout: Seconds?
    @Option(help: ArgumentHelp("Where the refresh tokens and client secret go: keyring, file, or auto (the keyring when a Secret Service answers on the session bus, else the file, said in one line).",
                               valueName: "STORE"))
    var store: SecretStoreChoice = .auto
    @OptionGroup var group: GroupOptions

    enum SecretStoreChoice: String, ExpressibleByArgument, CaseIterable { case keyring, file, auto }

    /// Where this login keeps the secrets: decided before the server is
    /// asked, so a keyring that is not there loses no issued token.
    private func secretLocation(_ credentials: CredentialStore) throws -> CredentialStore.SecretLocation {
        switch store {
        case .file:
            return .file
        case .keyring:
            if let why = Keyring.unavailability() {
                throw CLIError.environment("no keyring to keep the secrets in (\(why)); nothing was changed: unlock it, or use --store file")
            }
            return .keyring
        case .auto:
            // A group logged in before keeps its choice (a keyring that is not
            // there now is an error, not a silent move to the file).
            if let stored = try? credentials.snapshot(), stored.configuration != nil {
                if stored.secretLocation == .keyring, let why = Keyring.unavailability() {
                    throw CLIError.environment("this group keeps its secrets in the keyring, which cannot be used (\(why)); nothing was changed: unlock it, or use --store file")
                }
                return stored.secretLocation
            }
            guard let why = Keyring.unavailability() else { return .keyring }
            printError("no keyring answers on the session bus (\(why)): the secrets are kept in the group's credentials file")
            return .file
        }
    }

    /// What discovery and the login's requests may take.
    private var requestTimeout: Double { timeout?.value ?? HTTPRequest.defaultTimeout }

    func validate() throws {
        if let timeout, timeout.value < 0.001 { throw ValidationError("--timeout must be more than 0 seconds") }
        let forms = [username != nil || passwordStdin, clientCredentials, device].filter { $0 }.count
        if forms != 1 {
            throw ValidationError("log in one way: --username U --password-stdin (the password on standard input), "
                                  + "--client-credentials, or --device")
        }
        if username != nil && !passwordStdin || username == nil && passwordStdin {
            throw ValidationError("--username and --password-stdin go together (the password on standard input)")
        }
        if tokenURL == nil && issuer == nil { throw ValidationError("give --token-url URL, or --issuer URL to discover it") }
        if deviceURL != nil && !device { throw ValidationError("--device-url is for --device") }
        switch style {
        case .oauth2:
            if clientID == nil { throw ValidationError("--style oauth2 needs --client-id") }
            for (given, name) in [(refreshURL != nil, "--refresh-url"), (usernameField != nil, "--username-field"),
                                  (passwordField != nil, "--password-field")] where given {
                throw ValidationError("\(name) is for --style json")
            }
        case .json:
            for (given, name) in [(clientCredentials, "--client-credentials"), (device, "--device"), (issuer != nil, "--issuer"),
                                  (clientSecretFile != nil, "--client-secret-file"), (scope != nil, "--scope")] where given {
                throw ValidationError("\(name) is for --style oauth2: a JSON backend takes a user name and password")
            }
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
        for url in [tokenURL, refreshURL, issuer, deviceURL, revokeURL].compactMap({ $0 }) + apiOrigin {
            if let refusal = TokenEndpoint.transportRefusal(url, allowsInsecureHTTP: insecureHTTP) {
                throw ValidationError(refusal)
            }
        }
    }

    /// The login, told as an event either way (never a name or a secret).
    func run() throws {
        let started = MonotonicClock.nanoseconds()
        var metadata: Logger.Metadata = ["style": .string(style.rawValue), "grant": .string(grant)]
        do {
            try login()
            metadata["durationMs"] = .number((MonotonicClock.nanoseconds() - started) / 1_000_000)
            CommandLog.logger.event(.authLoginSuccess, "logged in", metadata)
        } catch {
            metadata["durationMs"] = .number((MonotonicClock.nanoseconds() - started) / 1_000_000)
            let code = (error as? CLIError)?.code ?? .environment
            metadata["reason"] = .string("\(code)")
            CommandLog.logger.event(.authLoginFailure, level: .warning, "login failed", metadata)
            throw error
        }
    }

    /// Which grant the options ask for, as the events name it.
    private var grant: String { device ? "device" : username != nil ? "password" : "clientCredentials" }

    private func login() throws {
        let secret = try clientSecretFile.map(readSecretFile)
        let password = passwordStdin ? readLine(strippingNewline: true) : nil
        if passwordStdin, password?.isEmpty ?? true {
            throw CLIError.badInput("no password on standard input: pipe it in, as in printf '%s\\n' \"$PASSWORD\" | tether login ...")
        }
        let directory = try group.open()
        let session = try AuthSession(group: directory)
        let location = try secretLocation(session.store)
        let login = self
        let (configuration, user, client) = try runAsync { http async throws -> (AuthConfiguration, TokenSet?, TokenSet?) in
            let configuration = try await login.configuration(secret: secret, http: http)
            let endpoint = TokenEndpoint(configuration: configuration, http: http)
            if login.device {
                var user = try await login.deviceLogin(endpoint)
                user.subject = JSONWebToken(user.accessToken)?.subject
                let client = secret == nil ? nil : try? await endpoint.request(.clientCredentials)
                return (configuration, user, client)
            }
            do throws(TokenEndpointError) {
                if let username = login.username, let password {
                    var user = try await endpoint.request(.password(username: username, password: password))
                    user.subject = username
                    // The client token is a convenience: a server may not allow the grant.
                    let client = secret == nil ? nil : try? await endpoint.request(.clientCredentials)
                    return (configuration, user, client)
                }
                return (configuration, nil, try await endpoint.request(.clientCredentials))
            } catch .invalidGrant where password != nil {
                let why = configuration.style == .json ? "HTTP 401 or 403" : "invalid_grant"
                throw CLIError.refused("the server refused the user name or password (\(why))")
            } catch {
                throw CLIError(error)
            }
        }
        // Saved under the refresh lock; another user's login first ends the previous one's session.
        let saved: AuthSession.SavedLogin
        do {
            saved = try session.saveLogin(configuration, user: user, client: client, in: location)
        } catch {
            if let change = error.userChange { Self.tell(change) }
            throw error.error.thrown
        }
        if let change = saved.userChange { Self.tell(change) }
        if let leftover = saved.leftover { printError("warning: \(leftover)") }
        let set = user ?? client
        let validity = set?.expiresAt.map { " (access token valid for \(Int(min(max(0, $0 - Date().timeIntervalSince1970), 1e12).rounded())) s)" } ?? ""
        if let user {
            output("logged in as \(user.displaySubject ?? "the approving user"): userAuthenticated\(validity)")
        } else {
            output(PrintableText.escaped("logged in as client \(configuration.clientID): clientAuthenticated\(validity)"))
        }
    }

    /// Another user than before: the previous one's session ended
    /// everywhere, then their user-scoped data went.
    private static func tell(_ change: AuthSession.UserChange) {
        if let leftover = change.leftover { printError("warning: \(leftover)") }
        output("another user than before: removed \(change.removedKeys.count) user-scoped key(s) and \(change.removedFiles.count) shared file(s)")
        CommandLog.logger.event(.authUserChanged, level: .notice, "another user logged in; the previous one's data is removed",
                                ["removedKeys": .number(change.removedKeys.count), "removedFiles": .number(change.removedFiles.count)])
    }

    /// The options, with what `--issuer` discovery found where no URL was given.
    private func configuration(secret: String?, http: HTTPClient) async throws -> AuthConfiguration {
        var tokenURL = tokenURL
        var deviceURL = deviceURL
        var revokeURL = revokeURL
        if let issuer {
            do throws(AuthorizationServerMetadata.Failure) {
                let metadata = try await AuthorizationServerMetadata.discover(issuer: issuer, allowsInsecureHTTP: insecureHTTP,
                                                                              http: http, timeout: requestTimeout)
                tokenURL = tokenURL ?? metadata.tokenEndpoint
                deviceURL = deviceURL ?? metadata.deviceAuthorizationEndpoint
                revokeURL = revokeURL ?? metadata.revocationEndpoint
            } catch {
                throw CLIError.environment("discovery failed: \(error)")
            }
        }
        if device && deviceURL == nil {
            throw CLIError.badInput("the server publishes no device authorization endpoint: give --device-url URL")
        }
        return AuthConfiguration(style: style, tokenURL: tokenURL ?? "", refreshURL: refreshURL, clientID: clientID ?? "",
                                 clientSecret: secret, scope: scope,
                                 usernameField: usernameField ?? "username", passwordField: passwordField ?? "password",
                                 allowsInsecureHTTP: insecureHTTP, apiOrigins: apiOrigin.compactMap { URLOrigin(origin: $0) },
                                 issuer: issuer, deviceURL: deviceURL, revokeURL: revokeURL, requestTimeout: timeout?.value)
    }

    /// RFC 8628: the code to enter, then polling until the user decides.
    private func deviceLogin(_ endpoint: TokenEndpoint) async throws -> TokenSet {
        let authorization: DeviceAuthorization
        do throws(TokenEndpointError) {
            authorization = try await endpoint.authorizeDevice(at: endpoint.configuration.deviceURL ?? "")
        } catch {
            throw CLIError(error)
        }
        output("To sign in, open \(authorization.verificationURI) and enter the code \(authorization.userCode)")
        if let complete = authorization.verificationURIComplete { output("(or open \(complete))") }
        output("waiting for approval (the code expires in \(Int(authorization.expiresIn.rounded())) s)")
        do throws(DeviceAuthorization.Failure) {
            return try await endpoint.pollDevice(authorization)
        } catch .endpoint(let error) {
            throw CLIError(error)
        } catch {
            throw CLIError.refused(error.description)
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
