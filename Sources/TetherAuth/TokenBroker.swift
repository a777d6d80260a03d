import Logging
import SystemPackage
import TetherHTTP
import TetherLog
import TetherLoop
import Synchronization
import TetherGroup

/// Hands out valid access tokens and refreshes them exactly once per expiry
/// across every task and every process of the group.
///
/// - A valid cached token costs one `lstat` of the credential store.
/// - In this process, concurrent callers that need a refresh await one
///   shared task (single flight).
/// - Across processes, the refresh runs under the group's refresh lock, a
///   kernel lock the kernel drops if the holder dies. After taking it the
///   broker re-reads the store: if another process refreshed meanwhile, it
///   uses that token and asks the server nothing. The new pair is written
///   (and fsynced) before the lock is released.
/// - `invalid_grant`: if the refresh token is still the stored one, the user
///   session ends in the store (the client token stays), which every process
///   sees at its next read. 5xx, 429, timeouts and offline keep everything
///   and retry on `backoff` (at most `attempts` tries); a token that has not yet expired is
///   returned instead of an error.
package final class TokenBroker: Sendable {
    package let store: CredentialStore
    package let refreshLockPath: String
    /// Seconds before expiry at which a token is renewed (clock-skew leeway).
    package let leeway: Double
    /// Waits (ms) between tries of a failing token request, at most `attempts` tries.
    package let backoff: Backoff
    package static let attempts = 4
    /// Carries the token requests (an `HTTPClient`, on `loop`).
    let transport: any TokenTransport
    /// Where a refresh runs: the loop its requests are driven on.
    let loop: EventLoop
    /// Ends a session the server refused.
    let session: AuthSession
    /// Seconds a token request may take in all; nil: the login's `--timeout`, else the default.
    package let requestTimeout: Double?

    private let flights = Mutex<[TokenKind: Task<TokenSet, any Error>]>([:])
    /// When this process last refreshed because a server refused a token.
    private let forced = Mutex<[TokenKind: Double]>([:])

    /// A pair the server issued that the store would not take (disk full,
    /// I/O error). The server may already have revoked the refresh token it
    /// replaced, so this pair is the session: it is kept here, with the
    /// refresh lock still held (no other process can refresh with the old
    /// token meanwhile), and saved at the next chance.
    struct Unsaved {
        var set: TokenSet
        /// The refresh token it replaced: saved only while that is still the stored one.
        var replacing: String?
        var lock: ExclusiveLock?
        /// Why the store (or the keyring) did not take it.
        var error: AuthError
    }
    let unsaved = Mutex<[TokenKind: Unsaved]>([:])
    /// When pairs kept for the keyring were last tried again.
    let lastKeyringRetry = Mutex<Double>(0)
    /// Told (once per failure) when the store cannot be written.
    let onWarning: (@Sendable (String) -> Void)?
    /// Where the `auth.refresh.*` and `auth.session.ended` events go.
    private let logger: Logger
    /// The group's refresh counts (`tether metrics`); nil where they cannot
    /// be kept (a read-only extension).
    private let counts: RefreshCounts?

    package convenience init(group: GroupDirectory, http: HTTPClient, leeway: Double = 60,
                             backoff: Backoff = Backoff(first: 200, maximum: 2_000, jittered: true), requestTimeout: Double? = nil,
                             logger: Logger = Logger(label: "tether.auth") { _ in SwiftLogNoOpLogHandler() },
                             onWarning: (@Sendable (String) -> Void)? = nil) throws(GroupError) {
        try self.init(group: group, transport: http, loop: http.loop, leeway: leeway, backoff: backoff,
                      requestTimeout: requestTimeout, logger: logger, onWarning: onWarning)
    }

    /// A broker whose requests go through `transport`, its refreshes running on `loop`.
    init(group: GroupDirectory, transport: any TokenTransport, loop: EventLoop, leeway: Double = 60,
         backoff: Backoff = Backoff(first: 200, maximum: 2_000, jittered: true), requestTimeout: Double? = nil,
         logger: Logger = Logger(label: "tether.auth") { _ in SwiftLogNoOpLogHandler() },
         onWarning: (@Sendable (String) -> Void)? = nil) throws(GroupError) {
        store = try CredentialStore(group: group)
        session = AuthSession(group: group, store: store)
        refreshLockPath = try group.preparedRefreshLockPath()
        self.logger = logger
        // A read-only extension cannot make the tallies: it counts nothing.
        counts = try? RefreshCounts(group: group)
        self.leeway = leeway
        self.backoff = backoff
        self.transport = transport
        self.loop = loop
        self.requestTimeout = requestTimeout
        self.onWarning = onWarning
    }

    static func now() -> Double { WallClock.now() }

    /// The auth state as stored now.
    package func state() throws(AuthError) -> AuthState {
        do { return try store.snapshot().state } catch { throw .store(error) }
    }

    /// A valid access token of `kind` (nil: the user's if logged in, else
    /// the client's), refreshed first if it is within the leeway of expiry
    /// or, given `rejected`, if a server refused that token (HTTP 401)
    /// before its expiry; see `tokenSet(_:rejecting:)`.
    package nonisolated(nonsending) func accessToken(_ kind: TokenKind? = nil, rejecting rejected: String? = nil) async throws(AuthError) -> String {
        try await tokenSet(kind, rejecting: rejected).accessToken
    }

    /// At most one refresh a server's 401 forces, per kind, in this long:
    /// a URL that refuses the token for another reason (another audience, a
    /// wrong address in the shared defaults) must not rotate the tokens on
    /// every fetch. Within it the stored token is the answer, and the
    /// caller's retry meets the server's 401 again.
    package static let forcedRefreshInterval: Double = 30

    /// The token set of `kind` after a server refused `rejected` (nil: as
    /// `tokenSet(_:)`). While the stored token is still `rejected` it is
    /// refreshed now, through the same single flight, lock and re-read as
    /// any refresh, so a token that another task or process has already
    /// replaced is used as it is and the token endpoint is asked once.
    package nonisolated(nonsending) func tokenSet(_ kind: TokenKind? = nil, rejecting rejected: String?) async throws(AuthError) -> TokenSet {
        guard let rejected else { return try await tokenSet(kind) }
        await retryKeyringSaves()
        if let pending = try pendingSet(kind), pending.accessToken != rejected { return pending }
        let (kind, current) = try stored(kind)
        if current.accessToken != rejected {
            return current.needsRefresh(now: Self.now(), leeway: leeway) ? try await refreshed(kind, stale: current) : current
        }
        let now = Self.now()
        let allowed = forced.withLock { last in
            if let previous = last[kind], now - previous < Self.forcedRefreshInterval { return false }
            last[kind] = now
            return true
        }
        guard allowed else { return current }
        let fresh = try await refreshed(kind, stale: current)
        // It joined a refresh that began from an older token and settled on
        // this one: once more, from this one.
        return fresh.accessToken == rejected ? try await refreshed(kind, stale: fresh) : fresh
    }

    package nonisolated(nonsending) func tokenSet(_ kind: TokenKind? = nil) async throws(AuthError) -> TokenSet {
        await retryKeyringSaves()
        if let pending = try pendingSet(kind) { return pending }
        switch try cached(kind) {
        case .valid(let set): return set
        case .due(let kind, let stale): return try await refreshed(kind, stale: stale)
        }
    }

    package enum Cached: Sendable {
        case valid(TokenSet)
        case due(TokenKind, stale: TokenSet)
    }

    /// The stored token set of `kind` without waiting: valid, or due for a
    /// refresh. The hot path of every token read: one `lstat` when the store
    /// is unchanged.
    package func cached(_ kind: TokenKind? = nil) throws(AuthError) -> Cached {
        let (kind, current) = try stored(kind)
        return current.needsRefresh(now: Self.now(), leeway: leeway) ? .due(kind, stale: current) : .valid(current)
    }

    /// The stored token set of `kind` (nil: the user's if logged in, else
    /// the client's), and which kind that is.
    private func stored(_ kind: TokenKind?) throws(AuthError) -> (TokenKind, TokenSet) {
        let snapshot: CredentialStore.Snapshot
        do { snapshot = try store.snapshot() } catch { throw .store(error) }
        guard let kind = kind ?? snapshot.preferredKind, let current = snapshot.tokens(kind) else {
            throw .notAuthenticated
        }
        return (kind, current)
    }

    // MARK: - Single flight

    private nonisolated(nonsending) func refreshed(_ kind: TokenKind, stale: TokenSet) async throws(AuthError) -> TokenSet {
        let task = flights.withLock { flights in
            if let running = flights[kind] { return running }
            // On the loop its requests run on: a refresh needs no other thread.
            let task = Task(executorPreference: loop.taskExecutor) { () async throws -> TokenSet in
                defer { self.flights.withLock { _ = $0.removeValue(forKey: kind) } }
                return try await self.refreshAcrossProcesses(kind, stale: stale)
            }
            flights[kind] = task
            return task
        }
        do {
            return try await task.value
        } catch let error as AuthError {
            throw error
        } catch {
            throw .temporarilyUnavailable(.unreachable("the refresh was cancelled"))
        }
    }

    // MARK: - Across processes

    /// How a refresh that returned a token went.
    enum Settled {
        case refreshed(attempts: Int)
        case joined
        /// The server could not be asked; the stored token is still valid.
        case keptCurrent(TokenEndpointError)
    }

    /// A refresh, told as an event and counted by outcome.
    private func refreshAcrossProcesses(_ kind: TokenKind, stale: TokenSet) async throws(AuthError) -> TokenSet {
        let started = MonotonicClock.nanoseconds() / 1_000_000
        var metadata: Logger.Metadata = ["kind": .string(kind.rawValue)]
        func took() -> Logger.MetadataValue { .milliseconds(from: started, to: MonotonicClock.nanoseconds() / 1_000_000) }
        // Set when this process ended the session (another's end, found
        // after the lock, is a failure of this refresh, not a second end).
        var endedHere = false
        do {
            let (set, settled) = try await refreshOnce(kind, stale: stale, endedHere: &endedHere)
            metadata["durationMs"] = took()
            switch settled {
            case .refreshed(let attempts):
                metadata["refreshedHere"] = .bool(true)
                metadata["attempts"] = .number(attempts)
                count(.refreshed)
                logger.event(.authRefreshSuccess, "refreshed the \(kind.rawValue) token", metadata)
            case .joined:
                metadata["refreshedHere"] = .bool(false)
                count(.joined)
                logger.event(.authRefreshSuccess, "the \(kind.rawValue) token was refreshed by another process; using it",
                             metadata)
            case .keptCurrent(let error):
                metadata["reason"] = .string(Self.reasonClass(of: .temporarilyUnavailable(error)))
                metadata["keptCurrent"] = .bool(true)
                count(.failed)
                logger.event(.authRefreshFailure, level: .warning,
                             "cannot refresh the \(kind.rawValue) token yet (\(error)); the current one is still valid",
                             metadata)
            }
            return set
        } catch {
            metadata["durationMs"] = took()
            metadata["reason"] = .string(Self.reasonClass(of: error))
            if endedHere {
                count(.sessionEnded)
                // Told after the refresh lock is released: a slow log never holds it.
                logger.event(.authSessionEnded, level: .warning,
                             "the server refused the refresh token: the \(kind.rawValue) session ended",
                             ["kind": .string(kind.rawValue), "reason": "refreshTokenRejected"])
            } else if case .sessionEnded = error {
                // Ended by another process while this one waited: counted there.
            } else {
                count(.failed)
            }
            logger.event(.authRefreshFailure, level: .warning, "cannot refresh the \(kind.rawValue) token: \(error)",
                         metadata)
            throw error
        }
    }

    private func count(_ outcome: RefreshCounts.Outcome) {
        counts?.record(outcome)
    }

    /// The class of a refresh failure, as the events name it (no secrets,
    /// no server text).
    static func reasonClass(of error: AuthError) -> String {
        switch error {
        case .notAuthenticated: "notAuthenticated"
        case .sessionEnded: "sessionEnded"
        case .temporarilyUnavailable(.serverUnavailable): "serverUnavailable"
        case .temporarilyUnavailable: "unreachable"
        case .refused(.invalidClient): "invalidClient"
        case .refused: "refused"
        case .cannotRefresh: "cannotRefresh"
        case .noHost: "noHost"
        case .refreshStalled: "lockTimeout"
        case .store: "store"
        case .keyring: "keyring"
        }
    }

    private func refreshOnce(_ kind: TokenKind, stale: TokenSet,
                             endedHere: inout Bool) async throws(AuthError) -> (TokenSet, Settled) {
        var lock: ExclusiveLock?
        // A holder that is stopped or hung must not stall us forever:
        // a few request deadlines, then a clear error (nothing is lost).
        let configured = requestTimeout ?? (try? store.snapshot().configuration?.requestTimeout) ?? nil
        let timeout = Int(min(3_600, max(1, (configured ?? HTTPRequest.defaultTimeout) * 3)) * 1000)
        do {
            lock = try await Self.acquire(refreshLockPath, timeoutMilliseconds: timeout)
        } catch .lockTimeout(_, let seconds) {
            throw .refreshStalled(seconds: seconds)
        } catch {
            throw .store(error)
        }
        defer { lock?.release() }

        var snapshot: CredentialStore.Snapshot
        do { snapshot = try store.snapshot() } catch { throw .store(error) }
        guard var configuration = snapshot.configuration, var current = snapshot.tokens(kind) else {
            // Logged out, or the session ended in another process, while we waited.
            throw kind == .user ? .sessionEnded : .notAuthenticated
        }
        // Someone refreshed while we waited for the lock: use theirs.
        if current.accessToken != stale.accessToken, !current.needsRefresh(now: Self.now(), leeway: leeway) {
            return (current, .joined)
        }

        // A keyring group's client secret: read now, off the loop.
        if configuration.clientSecretInKeyring {
            let unresolved = configuration, store = store
            configuration = try await Self.offLoop { () throws(AuthError) in try store.withClientSecret(unresolved) }
        }
        var endpoint = TokenEndpoint(configuration: configuration, transport: transport, timeout: requestTimeout)
        // One deadline for the whole refresh, retries included: the lock is
        // never held past it. A retry starts only with time left for an
        // answer: a refresh token sent with none could be rotated and lost.
        let deadline = MonotonicClock.seconds() + endpoint.timeout
        let margin = max(min(1, endpoint.timeout), min(5, endpoint.timeout / 4))
        var attempt = 0
        while true {
            endpoint.timeout = max(0.001, deadline - MonotonicClock.seconds())
            // A keyring group's refresh token: read now, after the lock, off the loop.
            if current.refreshToken == nil && current.refreshTokenID != nil {
                let unresolved = current, store = store, stored = configuration
                current = try await Self.offLoop { () throws(AuthError) in
                    try store.withRefreshToken(unresolved, as: kind, configuration: stored)
                }
            }
            // A client token is renewed by asking again; a user token only through its refresh token.
            let grant: TokenEndpoint.Grant
            if let refreshToken = current.refreshToken {
                grant = .refreshToken(refreshToken)
            } else if kind == .client {
                grant = .clientCredentials
            } else {
                throw .cannotRefresh
            }
            let answer: Result<(tokens: TokenSet, problem: TokenEndpointError?), TokenEndpointError>
            do throws(TokenEndpointError) { answer = .success(try await endpoint.answer(grant)) } catch { answer = .failure(error) }
            switch answer {
            case .success(let (tokens, problem)):
                var fresh = tokens
                // A server that does not rotate keeps the old refresh token valid.
                if fresh.refreshToken == nil { fresh.refreshToken = current.refreshToken }
                fresh.subject = current.subject
                if fresh.scope == nil { fresh.scope = current.scope }
                do throws(AuthError) {
                    let saving = fresh, store = store
                    if snapshot.secretLocation == .keyring {
                        try await Self.offLoop { () throws(AuthError) in try store.saveTokens(saving, as: kind) }
                    } else {
                        do throws(GroupError) { try store.save(saving, as: kind) } catch { throw AuthError.store(error) }
                    }
                } catch {
                    // The server issued this pair and may have revoked the old
                    // one: never drop it, nor write its secret where it does not
                    // belong. Keep it (and the lock) until it saves.
                    await keepUnsaved(fresh, as: kind, replacing: current.refreshIdentity, lock: &lock, error: error)
                }
                // Saved first (it expires on arrival): the rotated token is kept, the caller told.
                if let problem { throw .refused(problem) }
                return (fresh, .refreshed(attempts: attempt + 1))
            case .failure(.invalidGrant):
                // Re-read first: a process outside our lock (or a host) may have rotated it.
                do { snapshot = try store.snapshot() } catch { throw .store(error) }
                if let latest = snapshot.tokens(kind), latest.refreshIdentity != current.refreshIdentity {
                    if !latest.needsRefresh(now: Self.now(), leeway: leeway) { return (latest, .joined) }
                    guard MonotonicClock.seconds() + margin <= deadline else { throw .temporarilyUnavailable(.unreachable("the request timed out")) }
                    current = latest
                    continue
                }
                try session.end(kind, ifRefreshIdentity: current.refreshIdentity)
                if let keyring = store.keyring(snapshot) {
                    // The refused token goes from the keyring too (if that fails, it is dead anyway).
                    let account = CredentialStore.account(of: current, as: kind, configuration: configuration)
                    _ = try? await Self.offLoop { () throws(AuthError) -> Bool in
                        do throws(KeyringError) { return try keyring.clear(.refreshToken(kind), account: account) } catch { throw .keyring(error) }
                    }
                }
                endedHere = true
                throw .sessionEnded
            case .failure(let error) where error.isTransient:
                if !current.isExpired(now: Self.now()) { return (current, .keptCurrent(error)) }
                attempt += 1
                let delay = Double(backoff.delay(beforeRetry: attempt)) / 1_000
                guard attempt < Self.attempts, MonotonicClock.seconds() + delay + margin <= deadline else { throw .temporarilyUnavailable(error) }
                // A backoff timer, not synchronization (invariant 10): the server asked us to wait.
                try? await Task.sleep(nanoseconds: UInt64(delay * 1e9))
            case .failure(let error):
                throw .refused(error)
            }
        }
    }
}
