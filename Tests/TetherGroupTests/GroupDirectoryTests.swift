import Foundation
import Testing
import TetherGroup
import TetherTestSupport

@Suite(.timed) struct GroupDirectoryTests {
    @Test func createdOnFirstUseWithMode0700() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path + "/a/b/group"
        let group = try GroupDirectory(path: path)
        #expect(group.path == path)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o700)
        _ = try group.preparedLockPath(for: .feature(FeatureName("rec")))
        let locks = try FileManager.default.attributesOfItem(atPath: path + "/locks/features")
        #expect((locks[.posixPermissions] as? Int) == 0o700)
    }

    /// Secrets live beside the group (a sandbox grants the group whole and
    /// leaves them out); a store an earlier version kept inside is moved
    /// there, and a stale inside copy is removed, never left readable.
    @Test func secretsLiveBesideTheGroupAndAnOldStoreIsMovedThere() throws {
        let dir = try TemporaryDirectory()
        let group = try GroupDirectory(path: dir.path + "/group")
        #expect(group.secretsPath == dir.path + "/.group.secrets")
        try Data(#"{"old":1}"#.utf8).write(to: URL(fileURLWithPath: group.path + "/credentials.json"))
        let secrets = try group.preparedSecretsPath()
        #expect(try String(contentsOfFile: secrets + "/credentials.json", encoding: .utf8) == #"{"old":1}"#)
        #expect(!FileManager.default.fileExists(atPath: group.path + "/credentials.json"))
        let attributes = try FileManager.default.attributesOfItem(atPath: secrets)
        #expect((attributes[.posixPermissions] as? Int) == 0o700)
        // A copy found inside again (an old version still running): the newer one stays.
        func leaveInside(_ text: String, aged seconds: Int) throws {
            let inside = group.path + "/credentials.json"
            try Data(text.utf8).write(to: URL(fileURLWithPath: inside))
            let when = Date().addingTimeInterval(TimeInterval(seconds))
            try FileManager.default.setAttributes([.modificationDate: when], ofItemAtPath: inside)
        }
        try leaveInside(#"{"stale":1}"#, aged: -3_600)
        _ = try group.preparedSecretsPath()
        #expect(try String(contentsOfFile: secrets + "/credentials.json", encoding: .utf8) == #"{"old":1}"#)
        #expect(!FileManager.default.fileExists(atPath: group.path + "/credentials.json"))
        try leaveInside(#"{"rotated":1}"#, aged: 3_600)
        _ = try group.preparedSecretsPath()
        #expect(try String(contentsOfFile: secrets + "/credentials.json", encoding: .utf8) == #"{"rotated":1}"#)
        #expect(!FileManager.default.fileExists(atPath: group.path + "/credentials.json"))
        // A planted symlink in its place is refused, as for the group.
        let other = try GroupDirectory(path: dir.path + "/other")
        #expect(symlink(dir.path, other.secretsPath) == 0)
        #expect(throws: GroupError.symlinkRefused(other.secretsPath)) { try other.preparedSecretsPath() }
    }

    /// Every spelling of a group finds the same secrets, never inside it.
    @Test(arguments: [("/a/b", "/a/.b.secrets"), ("/a/b/", "/a/.b.secrets"), ("/a/b/.", "/a/.b.secrets"),
                      ("/a/c/../b", "/a/.b.secrets"), ("//a//b", "/a/.b.secrets"), ("/group", "/.group.secrets")])
    func secretsPathOfEverySpelling(_ group: String, _ secrets: String) {
        #expect(GroupDirectory.secretsPath(of: group) == secrets)
    }

    @Test func resolutionOrderIsFlagThenEnvironmentThenXDG() throws {
        let env = ["TETHER_GROUP": "/env/group", "XDG_STATE_HOME": "/xdg", "HOME": "/home/u"]
        #expect(try GroupDirectory.resolvePath(explicit: "/flag", environment: env) == "/flag")
        #expect(try GroupDirectory.resolvePath(explicit: nil, environment: env) == "/env/group")
        #expect(try GroupDirectory.resolvePath(explicit: nil, environment: ["XDG_STATE_HOME": "/xdg", "HOME": "/h"])
            == "/xdg/tether/default")
        #expect(try GroupDirectory.resolvePath(explicit: nil, environment: ["HOME": "/h"])
            == "/h/.local/state/tether/default")
        // A relative XDG_STATE_HOME is invalid per the spec and ignored.
        #expect(try GroupDirectory.resolvePath(explicit: nil, environment: ["XDG_STATE_HOME": "rel", "HOME": "/h"])
            == "/h/.local/state/tether/default")
        #expect(throws: GroupError.noGroupDirectory) {
            try GroupDirectory.resolvePath(explicit: nil, environment: [:])
        }
    }

    @Test func symlinkedGroupDirectoryIsRefused() throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.path + "/real", withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o700])
        try FileManager.default.createSymbolicLink(atPath: dir.path + "/link", withDestinationPath: dir.path + "/real")
        #expect(throws: GroupError.symlinkRefused(dir.path + "/link")) {
            try GroupDirectory(path: dir.path + "/link")
        }
    }

    @Test func groupOrWorldWritableDirectoryIsRefused() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path + "/open"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        chmod(path, 0o777)
        #expect(throws: GroupError.insecurePermissions(path, mode: UInt32(S_IFDIR) | 0o777)) {
            try GroupDirectory(path: path)
        }
    }

    @Test(.enabled(if: geteuid() == 0, "needs root to give a directory away"))
    func directoryOwnedByAnotherUserIsRefused() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path + "/foreign"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o700])
        #expect(chown(path, 65534, 65534) == 0)
        #expect(throws: GroupError.foreignOwner(path, uid: 65534)) {
            try GroupDirectory(path: path)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: path).isEmpty, "nothing is made in it")
        #expect(GroupError.foreignOwner(path, uid: 65534).description.contains("owned by uid 65534"))
        #expect(!GroupError.foreignOwner(path, uid: 65534).isBadInput, "the CLI's exit 3, not a usage error")
    }

    @Test(arguments: ["rec", "a", "0", "orders-widget", "a.b_c-d", String(repeating: "z", count: 64)])
    func validFeatureNames(_ name: String) throws {
        #expect(try FeatureName(name).rawValue == name)
    }

    @Test(arguments: ["", "../x", ".hidden", "-x", "_x", "Rec", "a/b", "a b", "ü", "x\n",
                      String(repeating: "z", count: 65)])
    func invalidFeatureNames(_ name: String) {
        #expect(throws: GroupError.invalidFeatureName(name)) { try FeatureName(name) }
    }

    /// A refused name is repeated escaped, and at most 64 characters of it.
    @Test func aRefusedNameIsRepeatedEscapedAndBounded() {
        #expect(GroupError.invalidFeatureName("a\nü").description.hasPrefix(#"invalid feature name 'a\n\u{00FC}':"#))
        let long = GroupError.invalidFeatureName(String(repeating: "z", count: 131_072)).description
        #expect(long.hasPrefix("invalid feature name '\(String(repeating: "z", count: 64))…' (131072 characters):"), "\(long.prefix(120))")
        #expect(long.utf8.count < 300)
    }

    /// The host's full mark is made, without waiting on a FIFO planted at
    /// its path, and removed.
    @Test func theFullMarkIsMadeWithoutWaitingAndRemoved() async throws {
        let dir = try TemporaryDirectory()
        let marker = GroupDirectory.fullMarkerPath(of: dir.path)
        try #require(mkdir(dir.path + "/locks", 0o700) == 0)
        GroupDirectory.setFullMark(true, at: marker)
        var info = stat()
        #expect(lstat(marker, &info) == 0 && info.st_mode & S_IFMT == S_IFREG && info.st_mode & 0o777 == 0o600)
        GroupDirectory.setFullMark(false, at: marker)
        #expect(lstat(marker, &info) != 0)
        try #require(mkfifo(marker, 0o600) == 0)
        let made: Void? = try await blockingCall(within: 5, release: { close(open(marker, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) }) {
            GroupDirectory.setFullMark(true, at: marker)
        }
        #expect(made != nil, "waited for a reader of the FIFO at the mark")
    }
}
