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

struct Login: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Obtain tokens from an OAuth 2.0 token endpoint and store them for the whole group.",
        discussion: """
            With --username, the password is read from standard input (one line), never from \
            arguments or the environment. The client secret, if any, is read from a file. Tokens, \
            the client id and secret are kept in GROUP/credentials.json (mode 0600). With a client \
            secret, a user login also obtains a client token, which logout keeps.
            Example: printf '%s\\n' "$PASSWORD" | tether login --token-url http://127.0.0.1:8080/token \
            --client-id tether-demo --client-secret-file secret.txt --username alice --password-stdin
            """
    )

    @Option(help: ArgumentHelp("The token endpoint, an http(s) URL.", valueName: "URL")) var tokenURL: String
    @Option(help: ArgumentHelp("The OAuth client id.", valueName: "ID")) var clientID: String
    @Option(help: ArgumentHelp("A file holding the client secret (client_secret_basic).", valueName: "PATH"))
    var clientSecretFile: String?
    @Option(help: ArgumentHelp("Log in as this user (password grant).", valueName: "U")) var username: String?
    @Flag(help: "Read the user's password from standard input.") var passwordStdin = false
    @Flag(help: "Log in as the client itself (client_credentials grant).") var clientCredentials = false
    @Option(help: ArgumentHelp("The scope to ask for.", valueName: "S")) var scope: String?
    @OptionGroup var group: GroupOptions

    func validate() throws {
        if clientCredentials && (username != nil || passwordStdin) {
            throw ValidationError("use either --username with --password-stdin, or --client-credentials, not both")
        }
        if !clientCredentials && (username == nil || !passwordStdin) {
            throw ValidationError("use --username U --password-stdin (the password on standard input), or --client-credentials")
        }
    }

    func run() throws {
        let secret = try clientSecretFile.map(readSecretFile)
        let password = passwordStdin ? readLine(strippingNewline: true) : nil
        if passwordStdin, password?.isEmpty ?? true {
            throw CLIError.badInput("no password on standard input: pipe it in, as in printf '%s\\n' \"$PASSWORD\" | tether login ...")
        }
        let configuration = AuthConfiguration(tokenURL: tokenURL, clientID: clientID, clientSecret: secret, scope: scope)
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
                throw CLIError.refused("the server refused the user name or password (invalid_grant)")
            } catch {
                throw CLIError(error)
            }
        }
        // Under the refresh lock, so a login never interleaves with a refresh.
        let lock = try ExclusiveLock.acquire(path: try directory.preparedRefreshLockPath())
        defer { lock.release() }
        try store.shared.update { values in
            values["configuration"] = configuration.jsonValue
            values[TokenKind.user.rawValue] = user?.jsonValue
            if let client { values[TokenKind.client.rawValue] = client.jsonValue }
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
