@testable import TetherAuth
import TetherGroup
import TetherLoop
import TetherTestSupport

/// A real group in a temporary directory, its credential store and refresh
/// lock real files, with a login's configuration stored. Only HTTP is not
/// real: a broker made here asks `server`, in memory.
final class AuthFixture: Sendable {
    let directory: TemporaryDirectory
    let group: GroupDirectory
    let store: CredentialStore
    let refreshLockPath: String
    /// The loop the brokers' refreshes run on.
    let thread: EventLoopThread

    static let tokenURL = "https://auth.example/token"
    static let configuration = AuthConfiguration(tokenURL: tokenURL, clientID: "app", revokeURL: "https://auth.example/revoke")

    init(configuration: AuthConfiguration? = AuthFixture.configuration) throws {
        directory = try TemporaryDirectory("tether-auth")
        group = try GroupDirectory(path: directory.group)
        store = try CredentialStore(group: group)
        refreshLockPath = try group.preparedRefreshLockPath()
        thread = try EventLoopThread()
        if let configuration { try store.save(configuration) }
    }

    deinit { thread.shutdown() }

    /// A broker of this group asking `server`; retries after 1 ms.
    func broker(_ server: InMemoryTokenServer, leeway: Double = 60) throws -> TokenBroker {
        try TokenBroker(group: group, transport: server, loop: thread.loop, leeway: leeway,
                        backoff: Backoff(first: 1, maximum: 1))
    }

    /// Stores `set` as the token set of `kind`.
    func save(_ set: TokenSet, as kind: TokenKind = .user) throws {
        try store.save(set, as: kind)
    }

    func stored(_ kind: TokenKind = .user) throws -> TokenSet? {
        try store.snapshot().tokens(kind)
    }

    /// The group's refresh counts by outcome (0 where none was counted).
    func count(_ outcome: RefreshCounts.Outcome) throws -> Int64 {
        try RefreshCounts(group: group).read()[outcome] ?? 0
    }

    static var now: Double { WallClock.now() }

    /// A pair that expired 10 s ago.
    static func expired(_ access: String = "a1", refresh: String? = "r1") -> TokenSet {
        TokenSet(accessToken: access, refreshToken: refresh, expiresAt: now - 10, subject: "alice")
    }

    /// A pair valid for an hour.
    static func fresh(_ access: String, refresh: String?) -> TokenSet {
        TokenSet(accessToken: access, refreshToken: refresh, expiresAt: now + 3_600, subject: "alice")
    }
}
