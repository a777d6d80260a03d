#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import TetherAuth
import TetherGroup
import TetherTestSupport

/// What the log's redactor is given to hide: read inside logging calls, so
/// it never waits for the store's lock and never changes the store.
@Suite(.timed) struct CredentialStoreTests {
    @Test func theSecretsToRedactAreReadWithoutTheLockOrAnySideEffect() async throws {
        let configuration = AuthConfiguration(tokenURL: AuthFixture.tokenURL, clientID: "app", clientSecret: "client-secret-1")
        let fixture = try AuthFixture(configuration: configuration)
        try fixture.save(TokenSet(accessToken: "access-1", refreshToken: "refresh-1"), as: .user)
        try fixture.save(TokenSet(accessToken: "access-2"), as: .client)
        // The store's lock held elsewhere (a writer stopped mid-write, say).
        let held = try #require(try ExclusiveLock.tryAcquire(path: try fixture.group.preparedStoreLockPath("credentials")))
        defer { held.release() }
        let store = fixture.store
        let secrets = try #require(try await blockingCall(within: 5) { store.secretsWithoutLocking() }, "it waited for the store's lock")
        #expect(Set(secrets).isSuperset(of: ["access-1", "refresh-1", "access-2", "client-secret-1"]), "\(secrets)")

        // A corrupt file reads as no secrets, and stays where it is.
        let secretsDirectory = try fixture.group.preparedSecretsPath()
        try replaceFile(secretsDirectory + "/credentials.json", "{ torn", mode: 0o600)
        let afterCorruption = try #require(try await blockingCall(within: 5) { store.secretsWithoutLocking() })
        #expect(!afterCorruption.contains("access-1"))
        let listing = try #require(opendir(secretsDirectory))
        defer { closedir(listing) }
        while let entry = readdir(listing) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            #expect(!name.contains(".corrupt-"), "the redactor's read moved the store aside: \(name)")
        }
    }
}
