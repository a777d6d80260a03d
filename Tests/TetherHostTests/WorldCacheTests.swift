import Testing
import TetherLoop
import TetherManifest
import TetherSandbox
import TetherTestSupport
@testable import TetherHost

/// Extensions alike share one world; one that failed is forgotten by every
/// extension that shared it, so each makes it again at its next launch
/// (none keeps launching into a world that failed).
@Suite(.timed) struct WorldCacheTests {
    @Test func alikeExtensionsShareAWorldAndAFailedOneIsMadeAgainForEach() throws {
        let scratch = try TemporaryDirectory()
        let loop = try EventLoop()
        let cache = WorldCache(loop: loop)
        defer { cache.removeConfiguration() }
        let policy = SandboxPolicy(role: .widget, openAccess: false, group: scratch.path + "/group", temporaryDirectory: nil,
                                   memoryLimitMiB: nil)
        // "other" runs another program: a world of its own.
        func world(_ name: String) throws -> SpawnWorld? {
            let executable = name == "other" ? "/bin/false" : "/bin/true"
            return try cache.world(for: ExtensionManifest(name: name, role: .widget, executable: executable, source: ""),
                                   parent: scratch.path, support: .current, policy: { policy })
        }
        let first = try #require(try world("first"))
        let second = try #require(try world("second"))
        let other = try #require(try world("other"))
        #expect(first === second, "alike extensions share one world")
        #expect(other !== first, "another program has a world of its own")
        #expect(try world("first") === first, "kept for the next launch")

        cache.forget("second")
        let firstAgain = try #require(try world("first"))
        let secondAgain = try #require(try world("second"))
        #expect(firstAgain !== first, "the failed world is made again for the other extension that shared it too")
        #expect(secondAgain === firstAgain, "and shared again")
        #expect(try world("other") === other, "an unrelated world is kept")
    }
}
