import Foundation
import Testing
import TetherGroup
import TetherJSON
import TetherTestSupport

@Suite(.timed) struct SharedStoreTests {
    /// A store in a temporary group; the directory lives as long as the fixture.
    struct Fixture {
        let dir: TemporaryDirectory
        let group: GroupDirectory
        let store: SharedStore

        init() throws {
            dir = try TemporaryDirectory()
            group = try GroupDirectory(path: dir.group)
            store = try SharedStore.defaults(in: group)
        }
    }

    @Test func setGetRemoveAndTheFileIsPrivate() throws {
        let fixture = try Fixture()
        let (group, store) = (fixture.group, fixture.store)
        #expect(try store.values().isEmpty)
        try store.set(["a": 1, "b": [true, nil]], forKey: "k")
        #expect(try store.value(forKey: "k") == ["a": 1, "b": [true, nil]])
        #expect(try store.removeValue(forKey: "k"))
        #expect(try !store.removeValue(forKey: "k"))
        let mode = try FileManager.default.attributesOfItem(atPath: group.storePath("defaults"))[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(throws: GroupError.invalidKey("")) { try store.set(1, forKey: "") }
        // An update is checked as a set is (an app reaches it through the
        // group product), and a refused one writes nothing.
        #expect(throws: GroupError.invalidKey("a\nb")) { try store.update { $0["a\nb"] = 1; $0["ok"] = 2 } }
        #expect(try store.values().isEmpty)
    }

    /// An earlier version kept the stores at the group's top level: the
    /// first process that opens one moves it in.
    @Test func aStoreAtTheTopLevelIsMovedIn() throws {
        let dir = try TemporaryDirectory()
        let group = try GroupDirectory(path: dir.group)
        try writeFile(group.path + "/defaults.json", #"{"k": 1}"#, mode: 0o600)
        try writeFile(group.path + "/user-scoped.json", #"{"keys": ["k"]}"#, mode: 0o600)
        #expect(try SharedStore.defaults(in: group).value(forKey: "k") == 1)
        #expect(!FileManager.default.fileExists(atPath: group.path + "/defaults.json"))
        #expect(try UserScopedData(group: group).store.value(forKey: "keys") == ["k"])
    }

    @Test func aCachedReaderSeesAnotherWritersChange() throws {
        let fixture = try Fixture()
        let (group, store) = (fixture.group, fixture.store)
        let other = try SharedStore.defaults(in: group)
        try store.set("one", forKey: "k")
        #expect(try other.value(forKey: "k") == "one")
        #expect(try other.value(forKey: "k") == "one", "served from the cache")
        try store.set("two", forKey: "k")
        #expect(try other.value(forKey: "k") == "two")
    }

    @Test func aCorruptFileIsMovedAsideAndReportedNeverWiped() throws {
        let fixture = try Fixture()
        let (group, store) = (fixture.group, fixture.store)
        let path = group.storePath("defaults")
        try writeFile(path, "{\"k\": 1, oops", mode: 0o600)
        var keptAs = ""
        do {
            _ = try store.values()
            Issue.record("a corrupt store must not read as empty")
        } catch let error {
            guard case .corruptStore(let file, let aside, _) = error else { throw error }
            #expect(file == path)
            keptAs = aside
            #expect(error.description.contains("moved aside"))
        }
        #expect(try String(contentsOfFile: keptAs, encoding: .utf8) == "{\"k\": 1, oops", "the bytes are kept")
        #expect(try store.values().isEmpty)
        try store.set(2, forKey: "k")
        #expect(try store.value(forKey: "k") == 2)
    }

    @Test func aWriterFindingACorruptFileKeepsItAsideToo() throws {
        let fixture = try Fixture()
        let (group, store) = (fixture.group, fixture.store)
        try writeFile(group.storePath("defaults"), "[1,2]", mode: 0o600)
        #expect(throws: GroupError.self) { try store.set(1, forKey: "k") }
        let aside = try FileManager.default.contentsOfDirectory(atPath: group.path + "/stores").filter { $0.hasPrefix("defaults.json.corrupt-") }
        #expect(aside.count == 1)
    }

    @Test func symlinksAndExposedFilesAreRefused() throws {
        let fixture = try Fixture()
        let (dir, group, store) = (fixture.dir, fixture.group, fixture.store)
        try writeFile(dir.path + "/elsewhere", "{}", mode: 0o600)
        try FileManager.default.createSymbolicLink(atPath: group.storePath("defaults"), withDestinationPath: dir.path + "/elsewhere")
        #expect(throws: GroupError.symlinkRefused(group.storePath("defaults"))) { try store.values() }
        try FileManager.default.removeItem(atPath: group.storePath("defaults"))
        try writeFile(group.storePath("defaults"), "{}", mode: 0o644)
        #expect(throws: GroupError.exposedFile(group.storePath("defaults"), mode: 0o100644)) { try store.values() }
    }

    /// A hard link planted at the store (reading it would read, and the next
    /// write replace, another file of ours) and a FIFO (a read would block)
    /// are refused, and the linked file is left as it was.
    @Test func hardLinksAndFIFOsAtTheStoreAreRefused() throws {
        let fixture = try Fixture()
        let (dir, group, store) = (fixture.dir, fixture.group, fixture.store)
        let path = group.storePath("defaults")
        try writeFile(dir.path + "/precious", #"{"values":{"k":1}}"#, mode: 0o600)
        #expect(link(dir.path + "/precious", path) == 0)
        #expect(throws: GroupError.hardLinkRefused(path, links: 2)) { try store.values() }
        try FileManager.default.removeItem(atPath: path)
        #expect(mkfifo(path, 0o600) == 0)
        #expect(throws: GroupError.notARegularFile(path)) { try store.values() }
        #expect(try String(contentsOfFile: dir.path + "/precious", encoding: .utf8) == #"{"values":{"k":1}}"#)
    }

    @Test func exclusiveLockIsHeldUntilReleased() throws {
        let fixture = try Fixture()
        let dir = fixture.dir
        let path = dir.path + "/test.lock"
        let lock = try ExclusiveLock.acquire(path: path)
        #expect(try ExclusiveLock.tryAcquire(path: path) == nil)
        lock.release()
        #expect(try ExclusiveLock.tryAcquire(path: path) != nil)
    }
}
