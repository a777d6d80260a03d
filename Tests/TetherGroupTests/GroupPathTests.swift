import Testing
import TetherGroup
import TetherTestSupport

/// Where the group directory is when no flag says (the CLI's and the SDK's
/// rule), and which names may name a feature or an extension.
@Suite struct GroupPathTests {
    func resolve(_ explicit: String?, _ variables: [String: String]) throws -> String {
        try GroupDirectory.resolvePath(explicit: explicit, environment: variables)
    }

    @Test func theFlagThenTetherGroupThenXDGStateHomeThenHome() throws {
        let all = ["TETHER_GROUP": "/g", "XDG_STATE_HOME": "/state", "HOME": "/home/u"]
        #expect(try resolve("/flag", all) == "/flag")
        #expect(try resolve(nil, all) == "/g")
        #expect(try resolve("", all) == "/g")
        #expect(try resolve(nil, ["TETHER_GROUP": "", "XDG_STATE_HOME": "/state", "HOME": "/home/u"])
                == "/state/tether/default")
        // A relative XDG_STATE_HOME is invalid (the XDG spec): ignored.
        #expect(try resolve(nil, ["XDG_STATE_HOME": "state", "HOME": "/home/u"]) == "/home/u/.local/state/tether/default")
        #expect(throws: GroupError.self) { try resolve(nil, ["HOME": "relative"]) }
        #expect(throws: GroupError.self) { try resolve(nil, [:]) }
    }

    @Test func aRelativeFlagIsMadeAbsolute() throws {
        let resolved = try resolve("some/dir", [:])
        #expect(resolved.hasPrefix("/") && resolved.hasSuffix("/some/dir"))
    }

    @Test(arguments: ["a", "recording", "x.y_z-1", "0", String(repeating: "a", count: 64)])
    func validNames(_ name: String) throws {
        #expect(FeatureName.isValid(name))
        #expect(try FeatureName(name).description.contains(name))
    }

    @Test(arguments: ["", "A", "-a", ".a", "_a", "a/b", "../x", "a b", "é", String(repeating: "a", count: 65), "a\0b"])
    func invalidNames(_ name: String) {
        #expect(!FeatureName.isValid(name))
        #expect(throws: GroupError.self) { try FeatureName(name) }
    }

    @Test func eachTargetHasItsOwnLockInTheGroup() throws {
        let directory = try TemporaryDirectory()
        let group = try GroupDirectory(path: directory.path + "/g")
        let feature = try FeatureName("rec")
        let paths = [group.lockPath(for: .host), group.lockPath(for: .feature(feature)),
                     group.lockPath(for: .extensionInstance(feature))]
        #expect(Set(paths).count == 3)
        #expect(paths.allSatisfy { $0.hasPrefix(group.path + "/") })
        #expect(group.socketPath == group.path + "/host.sock")
    }
}
