#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import TetherGroup
import TetherTestSupport

/// The index of every secrets directory this user made, which a host reads
/// to hide them all from a read-only keyboard: real directories and links
/// under a state directory of the test's own.
@Suite struct SecretsIndexTests {
    let directory: TemporaryDirectory
    let state: String

    init() throws {
        directory = try TemporaryDirectory("tether-secrets-index")
        state = directory.path + "/state"
    }

    var variable: (String) -> String? { { [state] name in name == "XDG_STATE_HOME" ? state : nil } }
    var index: String { state + "/tether/.secrets-index" }

    /// A secrets directory of a group at `name`, made.
    func secrets(_ name: String) throws -> String {
        let path = directory.path + "/" + name
        #expect(mkdir(path, 0o700) == 0)
        return path
    }

    /// Registered directories are known, each once however often it is
    /// registered; one that is gone is not, and its link goes; a link
    /// that names a file, or a symlink to a directory, is passed over.
    @Test func whatExistsIsKnownAndWhatIsGoneIsForgotten() throws {
        let (a, b, gone) = (try secrets("a"), try secrets("b"), try secrets("gone"))
        for path in [a, b, gone, a] { SecretsIndex.register(path, variable: variable) }
        var info = stat()
        #expect(lstat(index, &info) == 0 && info.st_mode & 0o777 == 0o700)
        #expect(Set(SecretsIndex.known(variable: variable)) == [a, b, gone])

        #expect(rmdir(gone) == 0)
        try writeFile(directory.path + "/file", "x")
        #expect(symlink(a, directory.path + "/link") == 0)
        for path in [directory.path + "/file", directory.path + "/link"] { SecretsIndex.register(path, variable: variable) }
        #expect(Set(SecretsIndex.known(variable: variable)) == [a, b])
        // The gone directory's link was removed; the others' stay.
        let links = try directoryNames(index)
        #expect(links.count == 4 && !links.contains(PathHash.hex(gone)), "\(links)")
        // Only an absolute path is registered.
        SecretsIndex.register("relative/secrets", variable: variable)
        #expect(try directoryNames(index).count == 4)
    }

    /// At most `limit` are known, however many are registered.
    @Test func atMostTheLimitIsKnown() throws {
        for number in 0..<(SecretsIndex.limit + 6) { SecretsIndex.register(try secrets("s\(number)"), variable: variable) }
        #expect(SecretsIndex.known(variable: variable).count == SecretsIndex.limit)
    }

    /// An index another user could fill, or one planted as a symlink,
    /// names nothing; so does a name that is no hash of this index.
    @Test func anIndexOthersCouldFillIsNotRead() throws {
        let a = try secrets("a")
        SecretsIndex.register(a, variable: variable)
        #expect(SecretsIndex.known(variable: variable) == [a])
        #expect(chmod(index, 0o733) == 0)
        #expect(SecretsIndex.known(variable: variable) == [])
        #expect(chmod(index, 0o700) == 0)
        // A link of another name (as a peer would plant): passed over.
        #expect(symlink(try secrets("planted"), index + "/not-a-hash") == 0)
        #expect(SecretsIndex.known(variable: variable) == [a])

        // The index replaced by a symlink to a directory of links.
        #expect(rename(index, state + "/elsewhere") == 0 && symlink(state + "/elsewhere", index) == 0)
        #expect(SecretsIndex.known(variable: variable) == [])
    }

    /// Where the index is: XDG_STATE_HOME if absolute, else HOME's
    /// `.local/state`; nowhere without either.
    @Test func theIndexLivesInTheUsersStateDirectory() {
        let cases: [([String: String], String?)] = [
            (["XDG_STATE_HOME": "/s", "HOME": "/h"], "/s/tether/.secrets-index"),
            (["XDG_STATE_HOME": "relative", "HOME": "/h"], "/h/.local/state/tether/.secrets-index"),
            (["HOME": "relative"], nil),
            ([:], nil),
        ]
        for (environment, expected) in cases {
            #expect(SecretsIndex.directory(variable: { environment[$0] }) == expected, "\(environment)")
        }
    }

    func directoryNames(_ path: String) throws -> [String] {
        let stream = try #require(opendir(path), "cannot list \(path)")
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = DirectoryEntry.name(entry)
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }
}
