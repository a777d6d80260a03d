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

    /// Every value a set takes can be read back: 64 levels are stored (the
    /// file holds one more, the object around the values), and 65 are
    /// refused with nothing stored.
    @Test func sixtyFourLevelsAreStoredAndSixtyFiveRefused() throws {
        let fixture = try Fixture()
        var deep: JSONValue = 1
        for _ in 0..<64 { deep = .array([deep]) }
        try fixture.store.set(2, forKey: "other")
        try fixture.store.set(deep, forKey: "deep")
        // A reader of its own parses the file (a store caches what it read).
        #expect(try SharedStore.defaults(in: fixture.group).value(forKey: "deep") == deep)
        #expect(throws: GroupError.valueTooDeep("deeper", limit: 64)) { try fixture.store.set(.array([deep]), forKey: "deeper") }
        let reader = try SharedStore.defaults(in: fixture.group)
        #expect(try reader.value(forKey: "deeper") == nil)
        #expect(try reader.value(forKey: "other") == 2)
    }

    /// A store is at most 1 MiB, what the SDK parses within the smallest
    /// role's memory limit: a write past it is refused and nothing is
    /// stored; a larger file planted there is moved aside, kept, with a
    /// clear error, and the store is usable again.
    @Test func aStoreIsAtMostOneMebibyte() throws {
        let fixture = try Fixture()
        let store = fixture.store
        let value = JSONValue.array(Array(repeating: 0, count: 49_999))  // 99,999 bytes as JSON
        var stored = 0
        var refusal: GroupError?
        for index in 0..<12 where refusal == nil {
            do throws(GroupError) {
                try store.set(value, forKey: "filler\(index)")
                stored += 1
            } catch {
                refusal = error
            }
        }
        #expect(stored == 10, "\(stored) values of 100,000 bytes stored")
        let refused = try #require(refusal).description
        #expect(refused.contains("over a store's limit of 1 MiB") && refused.contains("nothing was stored"), "\(refused)")
        let reader = try SharedStore.defaults(in: fixture.group)
        #expect(try reader.value(forKey: "filler10") == nil)
        #expect(try reader.value(forKey: "filler9") != nil)

        // A 2 MiB store, written by someone else: kept aside, not parsed.
        let path = fixture.group.storePath("defaults")
        try writeFile(path, #"{"big":""# + String(repeating: "x", count: 2 << 20) + "\"}\n", mode: 0o600)
        #expect {
            _ = try SharedStore.defaults(in: fixture.group).value(forKey: "big")
        } throws: { error in
            let text = "\(error)"
            return text.contains("over a store's limit of 1 MiB") && text.contains("moved aside")
        }
        let stores = try FileManager.default.contentsOfDirectory(atPath: fixture.group.path + "/stores")
        #expect(stores.filter { $0.contains("corrupt") }.count == 1, "\(stores)")
        try store.set(1, forKey: "k")
        #expect(try SharedStore.defaults(in: fixture.group).values() == ["k": 1])
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
