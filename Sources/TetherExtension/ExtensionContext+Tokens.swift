import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import TetherAuth
import TetherGroup
import TetherIPC

extension ExtensionContext {
    /// Who refreshes this extension's tokens. Widgets and keyboards without
    /// open access only read shared state, so they ask the host
    /// (host-brokered); with no host they refresh themselves, coordinated
    /// with every other process. Notification extensions, and keyboards
    /// with open access, refresh themselves (coordinated).
    public var refreshPolicy: RefreshPolicy {
        switch identity.role {
        case .widget: .hostBrokered(strict: false)
        case .keyboard: hasOpenAccess ? .coordinated : .hostBrokered(strict: false)
        case .notification: .coordinated
        }
    }

    /// The group's defaults (see `tether defaults`); one store per process,
    /// so reads of an unchanged file cost one `lstat`.
    public var defaults: SharedStore {
        get throws(ExtensionError) {
            do { return try defaultsStore() } catch { throw .environment(error.description) }
        }
    }

    /// The auth state as stored now: cheap (the broker's cached store), no
    /// refresh, no host.
    public func authState() -> AuthState {
        (try? tokenBroker().state()) ?? .notAuthenticated
    }

    /// A valid access token (the user's if logged in, else the client's),
    /// following `refreshPolicy`. `completion` runs on the loop.
    public func accessToken(_ completion: @escaping (Result<String, ExtensionError>) -> Void) {
        if case .hostBrokered(let strict) = refreshPolicy {
            if isHostAttached {
                return call(HostMethod.tokenGet) { [self] result in
                    switch result {
                    case .success(let answer):
                        guard let token = answer["accessToken"]?.stringValue else {
                            return completion(.failure(.environment("the host's token answer had no token")))
                        }
                        completion(.success(token))
                    case .failure(.hostNotRunning) where !strict:
                        refreshHere(completion)
                    case .failure(let error):
                        completion(.failure(error))
                    }
                }
            }
            if strict { return completion(.failure(.refused(AuthError.noHost.description))) }
        }
        refreshHere(completion)
    }

    /// Coordinated: this process refreshes if due, under the group's lock.
    private func refreshHere(_ completion: @escaping (Result<String, ExtensionError>) -> Void) {
        let broker: TokenBroker
        do { broker = try tokenBroker() } catch { return completion(.failure(.environment(error.description))) }
        let loop = self.loop
        nonisolated(unsafe) let completion = completion  // runs on the loop only
        Task {
            let result: Result<String, ExtensionError>
            do throws(AuthError) {
                result = .success(try await broker.accessToken())
            } catch {
                result = .failure(.refused(error.description))
            }
            loop.execute { completion(result) }
        }
    }

    /// GETs `url` with a valid access token (per `refreshPolicy`) and
    /// parses the JSON answer. `completion` runs on the loop. Errors name
    /// the status, never the token.
    public func fetchJSON(_ url: String, timeout: Double = 10,
                          _ completion: @escaping (Result<JSONValue, ExtensionError>) -> Void) {
        guard HTTPExchange.isHTTPURL(url) else {
            return completion(.failure(.environment("\(url) is not an http(s) URL")))
        }
        let path = Self.pathForErrors(url)
        let loop = self.loop
        nonisolated(unsafe) let completion = completion  // runs on the loop only
        accessToken { result in
            guard case .success(let token) = result else {
                if case .failure(let error) = result { completion(.failure(error)) }
                return
            }
            Task {
                let outcome: Result<JSONValue, ExtensionError>
                do throws(HTTPExchange.Failure) {
                    let response = try await HTTPExchange.send("GET", url, headers: [("Authorization", "Bearer \(token)"),
                                                                                      ("Accept", "application/json")],
                                                               timeout: timeout)
                    if !(200..<300).contains(response.status) {
                        outcome = .failure(.refused("\(path) answered HTTP \(response.status)"))
                    } else if let value = try? JSONCodec.parse(response.body) {
                        outcome = .success(value)
                    } else {
                        outcome = .failure(.environment("\(path) answered no JSON"))
                    }
                } catch {
                    outcome = .failure(.environment("cannot fetch \(path): \(error)"))
                }
                loop.execute { completion(outcome) }
            }
        }
    }

    /// The URL's path for error text: no query (which may carry a secret).
    static func pathForErrors(_ url: String) -> String {
        // Up to the first '?' or '#' wherever it is (even in the authority), then the path after the host.
        let beforeQuery = url.prefix { $0 != "?" && $0 != "#" }
        let afterScheme = beforeQuery.split(separator: "/", maxSplits: 3, omittingEmptySubsequences: false).dropFirst(3).first ?? ""
        return "/" + afterScheme
    }
}
