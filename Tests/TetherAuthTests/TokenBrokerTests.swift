import Testing
@testable import TetherAuth
import TetherGroup
import TetherHTTP
import TetherTestSupport

/// The broker's branches, each without a process or a server: the store and
/// the refresh lock are real files of a temporary group, the token endpoint
/// is `InMemoryTokenServer`. (TokenCommandTests, TokenBrokerBranchTests and
/// the storms drive the same code through real processes and servers.)
@Suite(.timed) struct TokenBrokerTests {
    @Test func aFreshTokenIsReturnedWithoutARequest() async throws {
        let fixture = try AuthFixture()
        try fixture.save(AuthFixture.fresh("a1", refresh: "r1"))
        let server = InMemoryTokenServer(always: InMemoryTokenServer.tokens("a2", refresh: "r2"))
        let broker = try fixture.broker(server)
        #expect(try await broker.accessToken() == "a1")
        #expect(try await broker.accessToken(.user) == "a1")
        #expect(server.requests.isEmpty)
    }

    /// Many tasks find the token expired: one request, the rotated refresh
    /// token stored before anyone is answered.
    @Test func anExpiredTokenIsRefreshedOnceAndTheRotatedPairSaved() async throws {
        let fixture = try AuthFixture()
        try fixture.save(AuthFixture.expired("a1", refresh: "r1"))
        let server = InMemoryTokenServer(always: InMemoryTokenServer.tokens("a2", refresh: "r2"))
        let broker = try fixture.broker(server)
        let tokens = try await withThrowingTaskGroup(of: String.self) { tasks in
            for _ in 0..<16 { tasks.addTask { try await broker.accessToken(.user) } }
            return try await tasks.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(Set(tokens) == ["a2"] && tokens.count == 16)
        #expect(server.requests.count == 1)
        #expect(server.requests.first?.form["grant_type"] == "refresh_token" && server.requests.first?.form["refresh_token"] == "r1")
        let saved = try #require(try fixture.stored())
        #expect(saved.accessToken == "a2" && saved.refreshToken == "r2" && saved.subject == "alice")
        #expect(try fixture.count(.refreshed) == 1)
    }

    /// A server that does not rotate: the refresh token it did not replace is kept.
    @Test func aRefreshWithoutANewRefreshTokenKeepsTheOldOne() async throws {
        let fixture = try AuthFixture()
        try fixture.save(AuthFixture.expired("a1", refresh: "r1"))
        let broker = try fixture.broker(InMemoryTokenServer(always: InMemoryTokenServer.tokens("a2", refresh: nil)))
        #expect(try await broker.accessToken() == "a2")
        #expect(try fixture.stored()?.refreshToken == "r1")
    }

    /// Another process refreshed while this one waited for the lock: after
    /// taking it, the broker reads the store again and asks nothing.
    @Test func aRefreshDoneByAnotherProcessMeanwhileMakesNoRequest() async throws {
        let fixture = try AuthFixture()
        try fixture.save(AuthFixture.expired("a1", refresh: "r1"))
        let server = InMemoryTokenServer(always: InMemoryTokenServer.tokens("a3", refresh: "r3"))
        let broker = try fixture.broker(server)
        // "Another process" holds the refresh lock.
        let lock = try ExclusiveLock.acquire(path: fixture.refreshLockPath)
        let watch = try LockAttemptWatch(fixture.refreshLockPath)
        let waiting = Task { try await broker.accessToken(.user) }
        // The broker read the expired pair and now waits for the lock.
        #expect(try await watch.attempted())
        // The other process stores its new pair, then lets go.
        try fixture.save(AuthFixture.fresh("a2", refresh: "r2"))
        lock.release()
        #expect(try await waiting.value == "a2")
        #expect(server.requests.isEmpty)
        #expect(try fixture.count(.joined) == 1 && fixture.count(.refreshed) == 0)
    }

    /// invalid_grant for the stored refresh token: the user session ends in
    /// the store (every process sees it at its next read); the client token stays.
    @Test func invalidGrantEndsTheUserSessionAndKeepsTheClientToken() async throws {
        let fixture = try AuthFixture()
        try fixture.save(AuthFixture.expired("a1", refresh: "r1"))
        try fixture.save(AuthFixture.fresh("c1", refresh: nil), as: .client)
        let server = InMemoryTokenServer(always: InMemoryTokenServer.refusal("invalid_grant"))
        let broker = try fixture.broker(server)
        await #expect(throws: AuthError.sessionEnded) { try await broker.accessToken(.user) }
        #expect(server.requests.count == 1)
        #expect(try fixture.stored(.user) == nil)
        #expect(try fixture.stored(.client)?.accessToken == "c1")
        #expect(try broker.state() == .clientAuthenticated)
        #expect(try fixture.count(.sessionEnded) == 1)
    }

    /// invalid_grant, but while the request was out a writer outside the
    /// lock stored another valid pair: it is used, the session stays.
    @Test func invalidGrantAfterAnotherWriterStoredAValidPairKeepsTheSession() async throws {
        let fixture = try AuthFixture()
        try fixture.save(AuthFixture.expired("a1", refresh: "r1"))
        let server = InMemoryTokenServer { _, _ in
            _ = try? fixture.save(AuthFixture.fresh("a2", refresh: "r2"))
            return .success(InMemoryTokenServer.refusal("invalid_grant"))
        }
        let broker = try fixture.broker(server)
        #expect(try await broker.accessToken(.user) == "a2")
        #expect(server.requests.count == 1)
        #expect(try fixture.stored()?.refreshToken == "r2")
        #expect(try fixture.count(.sessionEnded) == 0)
    }

    /// The same, with the pair the other writer stored due too: the broker
    /// refreshes with that one instead of ending the session.
    @Test func invalidGrantAfterAnotherWriterStoredADuePairRefreshesWithIt() async throws {
        let fixture = try AuthFixture()
        try fixture.save(AuthFixture.expired("a1", refresh: "r1"))
        let server = InMemoryTokenServer { request, _ in
            guard request.form["refresh_token"] == "r1" else { return .success(InMemoryTokenServer.tokens("a3", refresh: "r3")) }
            _ = try? fixture.save(AuthFixture.expired("a2", refresh: "r2"))
            return .success(InMemoryTokenServer.refusal("invalid_grant"))
        }
        let broker = try fixture.broker(server)
        #expect(try await broker.accessToken(.user) == "a3")
        #expect(server.requests.map { $0.form["refresh_token"] } == ["r1", "r2"])
        #expect(try fixture.stored()?.refreshToken == "r3")
    }

    /// Ending a session removes the set only while its refresh token is the
    /// one that was refused: a pair renewed since then stays.
    @Test func endingASessionRemovesOnlyTheSetOfTheRefusedRefreshToken() throws {
        let fixture = try AuthFixture()
        let session = AuthSession(group: fixture.group, store: fixture.store)
        try fixture.save(AuthFixture.fresh("a2", refresh: "r2"))
        #expect(try !session.end(.user, ifRefreshIdentity: "r1"))
        #expect(try fixture.stored()?.refreshToken == "r2")
        #expect(try session.end(.user, ifRefreshIdentity: "r2"))
        #expect(try fixture.stored() == nil)
    }

    /// 5xx for a token that is due but not yet expired: it is still the
    /// answer, after one request; nothing is wiped.
    @Test func anUnavailableServerKeepsACurrentTokenThatIsStillValid() async throws {
        let fixture = try AuthFixture()
        let due = TokenSet(accessToken: "a1", refreshToken: "r1", expiresAt: AuthFixture.now + 30, subject: "alice")
        try fixture.save(due)
        let server = InMemoryTokenServer(always: InMemoryTokenServer.unavailable())
        let broker = try fixture.broker(server)
        #expect(try await broker.accessToken(.user) == "a1")
        #expect(server.requests.count == 1)
        #expect(try fixture.stored() == due)
        #expect(try fixture.count(.failed) == 1)
    }

    /// An expired token and a server that fails twice (503, then no
    /// connection): retried on the backoff, then refreshed.
    @Test func anExpiredTokenIsRetriedOnTheBackoffUntilTheServerAnswers() async throws {
        let fixture = try AuthFixture()
        try fixture.save(AuthFixture.expired("a1", refresh: "r1"))
        let server = InMemoryTokenServer(inTurn: [.success(InMemoryTokenServer.unavailable()), .failure(.refused),
                                                  .success(InMemoryTokenServer.tokens("a2", refresh: "r2"))])
        let broker = try fixture.broker(server)
        #expect(try await broker.accessToken(.user) == "a2")
        #expect(server.requests.map { $0.form["refresh_token"] } == ["r1", "r1", "r1"])
        #expect(try fixture.stored()?.refreshToken == "r2")
    }

    /// A server that stays unavailable: `attempts` tries, then a clear
    /// error; the expired pair is kept (5xx says nothing of the credentials).
    @Test func aServerThatStaysUnavailableFailsAfterTheAttemptsAndKeepsEverything() async throws {
        let fixture = try AuthFixture()
        let expired = AuthFixture.expired("a1", refresh: "r1")
        try fixture.save(expired)
        let server = InMemoryTokenServer(always: InMemoryTokenServer.unavailable(502))
        let broker = try fixture.broker(server)
        await #expect(throws: AuthError.temporarilyUnavailable(.serverUnavailable(status: 502))) { try await broker.accessToken(.user) }
        #expect(server.requests.count == TokenBroker.attempts)
        #expect(try fixture.stored() == expired)
    }
}
