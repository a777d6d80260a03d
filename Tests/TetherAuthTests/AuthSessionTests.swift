import Foundation
import Testing
@testable import TetherAuth
import TetherGroup
import TetherJSON
import TetherTestSupport

/// Login, another user, logout: `AuthSession` on a real temporary group.
/// (UserSwitchTests and DeviceLoginTests drive the same through `tether`.)
@Suite(.timed) struct AuthSessionTests {
    let fixture: AuthFixture
    let session: AuthSession
    let configuration = AuthFixture.configuration

    init() throws {
        fixture = try AuthFixture(configuration: nil)
        session = try AuthSession(group: fixture.group)
    }

    func user(_ name: String?, _ access: String = "a1", refresh: String? = "r1") -> TokenSet {
        TokenSet(accessToken: access, refreshToken: refresh, expiresAt: AuthFixture.now + 3_600, subject: name)
    }

    /// A user-scoped defaults key and shared file, and an unmarked key and file.
    func writeUserData() throws {
        let defaults = try SharedStore.defaults(in: fixture.group)
        try defaults.set(["1041"], forKey: "orders")
        try defaults.set("dark", forKey: "theme")
        let scoped = try UserScopedData(group: fixture.group)
        try scoped.markKey("orders")
        try FileManager.default.createDirectory(atPath: fixture.group.path + "/shared", withIntermediateDirectories: true)
        try writeFile(fixture.group.path + "/shared/inbox", "alice's messages")
        try writeFile(fixture.group.path + "/shared/logo", "the app's")
        try scoped.markFile("inbox")
    }

    var ordersAreThere: Bool { get throws { try SharedStore.defaults(in: fixture.group).value(forKey: "orders") != nil } }

    @Test func theSameUserAgainKeepsTheUserData() throws {
        #expect(try session.saveLogin(configuration, user: user("alice"), client: nil, in: .file).userChange == nil)
        try writeUserData()
        let again = try session.saveLogin(configuration, user: user("alice", "a2", refresh: "r2"), client: nil, in: .file)
        #expect(again.userChange == nil && again.leftover == nil)
        #expect(try ordersAreThere)
        #expect(try fixture.stored()?.refreshToken == "r2")
    }

    /// Another user: the previous session ends, their user-scoped keys and
    /// files go, everything else stays; who logged in is remembered.
    @Test func anotherUsersLoginClearsTheUserScopedDataAndKeepsTheRest() throws {
        _ = try session.saveLogin(configuration, user: user("alice"), client: nil, in: .file)
        try writeUserData()
        let bob = try session.saveLogin(configuration, user: user("bob", "b1", refresh: "rb"), client: nil, in: .file)
        #expect(bob.userChange == AuthSession.UserChange(removedKeys: ["orders"], removedFiles: ["inbox"], leftover: nil))
        #expect(try !ordersAreThere)
        #expect(try SharedStore.defaults(in: fixture.group).value(forKey: "theme") == "dark")
        #expect(!FileManager.default.fileExists(atPath: fixture.group.path + "/shared/inbox"))
        #expect(FileManager.default.fileExists(atPath: fixture.group.path + "/shared/logo"))
        #expect(try fixture.stored()?.subject == "bob")
        #expect(try fixture.store.snapshot().values[AuthSession.lastUserKey] == .string("https://auth.example bob"))
    }

    /// Who logged in last outlives a logout: the next user's login still clears.
    @Test func aLogoutKeepsWhoWasLastSoTheNextUserStillClears() throws {
        _ = try session.saveLogin(configuration, user: user("alice"), client: nil, in: .file)
        try writeUserData()
        #expect(try session.logout().endedUser)
        #expect(try ordersAreThere, "a logout removes no data")
        let bob = try session.saveLogin(configuration, user: user("bob"), client: nil, in: .file)
        #expect(bob.userChange?.removedKeys == ["orders"])
        #expect(try !ordersAreThere)
    }

    /// An extension that replaced `shared` with a symlink and marked a name
    /// cannot make the next user's login (unconfined) delete a file elsewhere.
    @Test func clearingNeverFollowsASymlinkedSharedDirectory() throws {
        _ = try session.saveLogin(configuration, user: user("alice"), client: nil, in: .file)
        let outside = fixture.directory.path + "/outside"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        try writeFile(outside + "/authorized_keys", "ssh-ed25519 AAAA")
        try #require(symlink(outside, fixture.group.path + "/shared") == 0)
        try UserScopedData(group: fixture.group).markFile("authorized_keys")
        let bob = try session.saveLogin(configuration, user: user("bob"), client: nil, in: .file)
        #expect(bob.userChange == AuthSession.UserChange(removedKeys: [], removedFiles: [], leftover: nil))
        #expect(FileManager.default.fileExists(atPath: outside + "/authorized_keys"))
    }

    /// What a writer killed mid-write leaves, a copy of the credentials, is
    /// gone after a logout, even one that finds nobody logged in.
    @Test func aLogoutRemovesACrashedWritersCopyOfTheCredentials() throws {
        let leftover = try fixture.group.preparedSecretsPath() + "/.credentials.json.\(pidOfNoProcess).0.tmp"
        try writeFile(leftover, #"{"user":{"refreshToken":"secret-refresh-token"}}"#, mode: 0o600)
        #expect(try !session.logout().endedUser)
        #expect(!FileManager.default.fileExists(atPath: leftover))
    }

    /// A user nobody can tell apart (no subject) is always someone else.
    @Test func anUnknownUserCountsAsAnotherUser() throws {
        _ = try session.saveLogin(configuration, user: user(nil), client: nil, in: .file)
        try writeUserData()
        let again = try session.saveLogin(configuration, user: user(nil, "a2"), client: nil, in: .file)
        #expect(again.userChange?.removedKeys == ["orders"])
    }

    /// A client login changes no user's data; a user login keeps the client
    /// token of the same server and client, and drops another client's.
    @Test func theClientTokenOfTheSameClientIsKept() throws {
        let client = user(nil, "c1", refresh: nil)
        #expect(try session.saveLogin(configuration, user: nil, client: client, in: .file).userChange == nil)
        _ = try session.saveLogin(configuration, user: user("alice"), client: nil, in: .file)
        #expect(try fixture.stored(.client)?.accessToken == "c1")
        var other = configuration
        other.clientID = "another-app"
        _ = try session.saveLogin(other, user: user("alice"), client: nil, in: .file)
        #expect(try fixture.stored(.client) == nil)
        #expect(try fixture.store.snapshot().configuration?.clientID == "another-app")
    }

    /// A logout ends the user session only, and names the refresh token
    /// to revoke; a second one finds nobody.
    @Test func aLogoutEndsTheUserSessionAndNamesWhatToRevoke() throws {
        _ = try session.saveLogin(configuration, user: user("alice", "a1", refresh: "r1"), client: user(nil, "c1", refresh: nil), in: .file)
        let loggedOut = try session.logout()
        #expect(loggedOut.endedUser && loggedOut.state == .clientAuthenticated && loggedOut.leftover == nil)
        let revocation = try #require(loggedOut.revocation)
        #expect(revocation.url == "https://auth.example/revoke" && revocation.token == "r1" && revocation.hint == "refresh_token")
        #expect(try fixture.stored(.user) == nil && fixture.stored(.client)?.accessToken == "c1")

        let again = try session.logout()
        #expect(!again.endedUser && again.state == .clientAuthenticated && again.revocation == nil)
    }

    /// No refresh token: the access token is revoked, where the caller says.
    @Test func aLogoutWithoutARefreshTokenRevokesTheAccessToken() throws {
        var configuration = configuration
        configuration.revokeURL = nil
        _ = try session.saveLogin(configuration, user: user("alice", "a1", refresh: nil), client: nil, in: .file)
        let loggedOut = try session.logout(revokingAt: "http://auth.example/revoke", allowingInsecureHTTP: true)
        #expect(loggedOut.state == .notAuthenticated)
        let revocation = try #require(loggedOut.revocation)
        #expect(revocation.token == "a1" && revocation.hint == "access_token" && revocation.url == "http://auth.example/revoke")
        #expect(revocation.configuration.allowsInsecureHTTP)
        #expect(try fixture.store.snapshot().configuration?.allowsInsecureHTTP == false, "allowed for this revocation only")
    }

    /// A logout and a login wait for a refresh in flight (the refresh lock):
    /// a refresh never saves over either, nor either over a refresh.
    @Test func aLogoutAndALoginWaitForTheRefreshLock() async throws {
        _ = try session.saveLogin(configuration, user: user("alice"), client: nil, in: .file)
        let (session, configuration, bob) = (session, configuration, user("bob", "b1", refresh: "rb"))
        let lock = try ExclusiveLock.acquire(path: fixture.refreshLockPath)
        let watch = try LockAttemptWatch(fixture.refreshLockPath)
        let logout = Task { try await offThePool { try session.logout() } }
        #expect(try await watch.attempted())
        #expect(try fixture.stored()?.subject == "alice", "the session stays while the lock is held")
        lock.release()
        #expect(try await logout.value.endedUser)
        #expect(try fixture.stored() == nil)

        let held = try ExclusiveLock.acquire(path: fixture.refreshLockPath)
        let loginWatch = try LockAttemptWatch(fixture.refreshLockPath)
        let login = Task { try await offThePool { try session.saveLogin(configuration, user: bob, client: nil, in: .file) } }
        #expect(try await loginWatch.attempted())
        #expect(try fixture.stored() == nil, "nothing is saved while the lock is held")
        held.release()
        _ = try await login.value
        #expect(try fixture.stored()?.subject == "bob")
    }
}
