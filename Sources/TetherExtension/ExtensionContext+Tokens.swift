import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import TetherAuth
import TetherGroup
import TetherHTTP
import TetherIPC

extension ExtensionContext {
    /// Who refreshes this extension's tokens. Widgets and keyboards without
    /// open access only read shared state, so they ask the host
    /// (host-brokered); with no host they refresh themselves, coordinated
    /// with every other process. Notification extensions, and keyboards
    /// with open access, refresh themselves (coordinated).
    var refreshPolicy: RefreshPolicy {
        switch identity.role {
        case .widget: .hostBrokered(strict: false)
        case .keyboard: hasOpenAccess ? .coordinated : .hostBrokered(strict: false)
        case .notification: .coordinated
        }
    }

    /// The group's defaults (see `tether defaults`):
    /// `try context.defaults["greeting"]?.stringValue`.
    public var defaults: SharedDefaults {
        get throws(ExtensionError) {
            do { return SharedDefaults(store: try defaultsStore()) } catch { throw .environment(error.description) }
        }
    }

    /// Sets a defaults key that belongs to the logged-in user: it is
    /// removed when a different user logs in (`UserScopedData`).
    public func setUserScoped(_ value: JSONValue, forKey key: String) throws(ExtensionError) {
        guard hasOpenAccess || identity.role != .keyboard else { throw .readOnly(extension: identity.name) }
        do {
            try UserScopedData(group: identity.group).markKey(key)
            try defaultsStore().set(value, forKey: key)
        } catch {
            throw .environment(error.description)
        }
    }

    /// The auth state as stored now: cheap (the broker's cached store), no
    /// refresh, no host.
    public func authState() -> AuthState {
        (try? tokenBroker().state()) ?? .notAuthenticated
    }

    /// A valid access token (the user's if logged in, else the client's),
    /// following `refreshPolicy`.
    public func accessToken() async throws(ExtensionError) -> String {
        try await accessToken(rejecting: nil)
    }

    /// `rejected`: a token a server refused (HTTP 401) before its expiry. A
    /// fresh one is asked for, coordinated as every refresh is: if the
    /// stored token is already another, that one is the answer and nobody
    /// asks the token endpoint.
    func accessToken(rejecting rejected: String?) async throws(ExtensionError) -> String {
        if case .hostBrokered(let strict) = refreshPolicy {
            if isHostAttached {
                do throws(ExtensionError) {
                    return try await call(HostMethods.tokenGet, TokenRequest(rejected: rejected)).accessToken
                } catch .hostNotRunning where !strict {
                    // The host went away meanwhile: refresh here, coordinated.
                } catch {
                    throw error
                }
            } else if strict {
                throw .refused(AuthError.noHost.description)
            }
        }
        let broker: TokenBroker
        do { broker = try tokenBroker() } catch { throw .environment(error.description) }
        do throws(AuthError) {
            // The broker's waits (a refresh another task runs, the refresh
            // lock) resume on this loop, not on a thread of Swift's pool:
            // an extension stays one thread.
            return try await withTaskExecutorPreference(loop.taskExecutor) { () async throws(AuthError) -> String in
                try await broker.accessToken(rejecting: rejected)
            }
        } catch {
            throw .refused(error.description)
        }
    }

    /// GETs `url` with a valid access token (per `refreshPolicy`) and
    /// parses the JSON answer. A 401 gets one forced refresh (see
    /// `accessToken(rejecting:)`) and one retry. Errors name the status,
    /// never the token or the query. The token goes only to the origins
    /// allowed at login (`tether login --api-origin`; by default the token
    /// URL's): any other URL is refused before a request is made. `timeout`
    /// is in seconds (30, as for every HTTP request of Tether's, by default).
    public func fetchJSON(_ url: String, timeout: Double = 30) async throws(ExtensionError) -> JSONValue {
        let path = Self.pathForErrors(url)
        guard HTTPRequest.isHTTPURL(url) else { throw .environment("\(path) is not an http(s) URL") }
        let configuration: AuthConfiguration?
        do { configuration = try tokenBroker().store.snapshot().configuration } catch { throw .environment(error.description) }
        guard let configuration else { throw .refused(AuthError.notAuthenticated.description) }
        if let refusal = configuration.bearerRefusal(for: url) { throw .refused("cannot fetch \(path): \(refusal)") }
        let http = self.http
        func get(_ token: String) async throws(ExtensionError) -> HTTPResponse {
            do throws(HTTPFailure) {
                return try await http.send("GET", url, headers: [("Authorization", "Bearer \(token)"),
                                                                         ("Accept", "application/json")],
                                                   timeout: timeout)
            } catch .cancelled {
                throw .cancelled
            } catch {
                throw .environment("cannot fetch \(path): \(error)")
            }
        }
        let token = try await accessToken()
        var response = try await get(token)
        if response.status == 401, !Task.isCancelled {
            response = try await get(try await accessToken(rejecting: token))
        }
        guard (200..<300).contains(response.status) else { throw .refused("\(path) answered HTTP \(response.status)") }
        guard let value = try? JSONCodec.parse(response.body) else { throw .environment("\(path) answered no JSON") }
        return value
    }

    /// The URL's path for error text: no query (which may carry a secret).
    nonisolated static func pathForErrors(_ url: String) -> String {
        // Up to the first '?' or '#' wherever it is (even in the authority), then the path after the host.
        let beforeQuery = url.prefix { $0 != "?" && $0 != "#" }
        let afterScheme = beforeQuery.split(separator: "/", maxSplits: 3, omittingEmptySubsequences: false).dropFirst(3).first ?? ""
        return "/" + afterScheme
    }
}
