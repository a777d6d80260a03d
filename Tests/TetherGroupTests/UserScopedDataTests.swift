#if canImport(Glibc)
import Glibc
#endif
import Testing
import TetherGroup
import TetherTestSupport

/// What a login by another user clears: the marks are in a store any
/// writing extension may write straight to, so they are input like any
/// other, and the clearing runs unconfined (`tether login`).
@Suite struct UserScopedDataTests {
    /// Marks naming a path out of `shared/`, a hidden file or a file in a
    /// directory: nothing but a name a shared file may have is removed,
    /// and only in `shared/` itself.
    @Test func forgedMarksRemoveNothingOutsideShared() throws {
        let dir = try TemporaryDirectory("tether-user-scoped")
        let group = try GroupDirectory(path: dir.group)
        try group.prepareForExtensions()
        let shared = dir.group + "/shared"
        try #require(mkdir(shared + "/a", 0o700) == 0)
        // An absolute path of the test's own: unlinkat ignores the directory for one.
        let absolute = dir.path + "/absolute"
        for file in [shared + "/ok", shared + "/.hidden", shared + "/a/b", dir.path + "/outside", absolute] { try writeFile(file, "x") }
        _ = try SharedStore.defaults(in: group).update { $0["kept"] = "yes" }
        let forged = ["../stores/defaults.json", "../../outside", ".hidden", "a/b", "ok", absolute]
        // As an extension may write it: straight to the file, no API between.
        try replaceFile(try group.preparedStorePath("user-scoped"),
                        #"{"files":[\#(forged.map { "\"\($0)\"" }.joined(separator: ","))],"keys":[]}"# + "\n", mode: 0o600)
        let cleared = try UserScopedData(group: group).clear()
        #expect(cleared.files == ["ok"] && cleared.keys.isEmpty, "\(cleared)")
        for kept in [shared + "/.hidden", shared + "/a/b", dir.path + "/outside", absolute, try group.preparedStorePath("defaults")] {
            #expect(access(kept, F_OK) == 0, "\(kept) was removed")
        }
        #expect(try SharedStore.defaults(in: group).value(forKey: "kept") == "yes")
    }
}
