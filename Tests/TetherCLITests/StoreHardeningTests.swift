import Foundation
import Testing
import TetherGroup
import TetherJSON
import TetherTestSupport

/// Invariants 5 and 13 against kill -9: the store is never torn, and no temp
/// file (a full copy of the store, secrets included) outlives the next write.
@Suite(.timed) struct StoreHardeningTests {
    func temporaryFiles(_ group: TestGroup) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: group.path + "/stores")) ?? []).filter { $0.hasSuffix(".tmp") }
    }

    /// The store parses and holds one of the values ever written.
    func expectWhole(_ group: TestGroup, values: Set<String>) throws {
        let path = group.path + "/stores/defaults.json"
        let data = try #require(FileManager.default.contents(atPath: path), "the store vanished")
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        let value = try #require(object?["big"] as? String, "torn or empty store: \(data.count) bytes")
        #expect(values.contains(String(value.prefix(8))))
    }

    @Test func killNineAtRandomInstantsNeverTearsTheStoreAndLeavesNoTempFile() throws {
        let group = try TestGroup()
        #expect(try group.run(["defaults", "set", "big", #""seed""#]).status == 0)
        var written: Set<String> = ["seed"]
        let watcher = try DirectoryWatcher(path: group.path + "/stores")
        var generator = SystemRandomNumberGenerator()
        let deadline = TestTimeout.deadline(after: 150)
        var caughtMidWrite = 0
        var leftovers = 0
        for round in 0..<200 where Date() < deadline {
            // ~100 KB, so the write takes long enough to be caught in it.
            let tag = String(format: "v%07d", round)
            written.insert(String(tag.prefix(8)))
            let value = "\"" + tag + String(repeating: "x", count: 100_000) + "\""
            watcher.drain()
            let writer = try group.start(["defaults", "set", "big", value])
            if round % 2 == 0 {
                // Catch it mid-write: the instant its temp file appears (or,
                // for a writer that writes in place, the store is modified).
                if watcher.waitForWriteStart(of: "defaults.json", timeoutMilliseconds: 5_000) { caughtMidWrite += 1 }
            } else {
                // A random instant from start-up to the end of the write.
                usleep(UInt32.random(in: 0...40_000, using: &generator))  // the instant to kill at, not a wait for state
            }
            writer.signal(SIGKILL)
            _ = try writer.waitForExit(timeout: 10)
            try expectWhole(group, values: written)
            if !temporaryFiles(group).isEmpty { leftovers += 1 }
        }
        #expect(caughtMidWrite > 20, "the test caught writers mid-write (\(caughtMidWrite))")
        #expect(leftovers > 0, "some kills left a temp file behind, as crashes do")
        // The next write removes every dead writer's temp file.
        #expect(try group.run(["defaults", "set", "big", #""final""#]).status == 0)
        #expect(temporaryFiles(group).isEmpty, "\(temporaryFiles(group))")
        #expect(try group.run(["defaults", "get", "big"]).stdout == "\"final\"\n")
    }

    /// Every value the CLI accepts can be stored and read back; a deeper one
    /// is refused at `set` (exit 2) and nothing is stored.
    @Test func sixtyFourLevelsAreStoredAndSixtyFiveRefused() throws {
        let group = try TestGroup()
        let deep = String(repeating: "[", count: 64) + "1" + String(repeating: "]", count: 64)
        #expect(try group.run(["defaults", "set", "other", "2"]).status == 0)
        let set = try group.run(["defaults", "set", "deep", deep])
        #expect(set.status == 0, "\(set.stderr)")
        let get = try group.run(["defaults", "get", "deep"])
        #expect(get.status == 0, "\(get.stderr)")
        #expect(get.stdout == deep + "\n")
        #expect(try group.run(["defaults", "get", "other"]).stdout == "2\n", "the store stayed readable")
        let tooDeep = "[" + deep + "]"
        let refused = try group.run(["defaults", "set", "deeper", tooDeep])
        #expect(refused.status == 2)
        #expect(try group.run(["defaults", "get", "deeper"]).status == 1)
        #expect(temporaryFiles(group).isEmpty)
        #expect(!(((try? FileManager.default.contentsOfDirectory(atPath: group.path + "/stores")) ?? []).contains { $0.contains("corrupt") }))
    }

    /// A store is at most 1 MiB (where the limit falls is `SharedStoreTests`'):
    /// the CLI's write past it exits 2 and stores nothing; a larger file
    /// planted there is moved aside, kept, with a clear error, and the
    /// store is usable again.
    @Test func aStoreIsAtMostOneMebibyte() throws {
        let group = try TestGroup()
        #expect(try group.run(["defaults", "set", "first", "1"]).status == 0, "the group exists")
        // Ten values of 100,000 bytes; an eleventh would pass 1 MiB.
        let store = try SharedStore.defaults(in: try GroupDirectory(path: group.path))
        let values = JSONValue.array(Array(repeating: 0, count: 49_999))
        try store.update { (all: inout [String: JSONValue]) throws(GroupError) in
            for index in 0..<10 { all["filler\(index)"] = values }
        }
        let value = "[" + Array(repeating: "0", count: 49_999).joined(separator: ",") + "]"
        let refused = try group.run(["defaults", "set", "filler10", value])
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("over a store's limit of 1 MiB"), "\(refused.stderr)")
        #expect(refused.stderr.contains("nothing was stored"), "\(refused.stderr)")
        #expect(try group.run(["defaults", "get", "filler10"]).status == 1)
        #expect(try group.run(["defaults", "get", "filler9"]).status == 0)
        #expect(temporaryFiles(group).isEmpty)

        // A 2 MiB store, written by someone else: kept aside, not parsed.
        let path = group.path + "/stores/defaults.json"
        try writeFile(path, #"{"big":""# + String(repeating: "x", count: 2 << 20) + "\"}\n", mode: 0o600)
        let read = try group.run(["defaults", "get", "big"])
        #expect(read.status != 0)
        #expect(read.stderr.contains("over a store's limit of 1 MiB") && read.stderr.contains("moved aside"), "\(read.stderr)")
        let kept = try FileManager.default.contentsOfDirectory(atPath: group.path + "/stores").filter { $0.contains("corrupt") }
        #expect(kept.count == 1, "\(kept)")
        #expect(try group.run(["defaults", "set", "k", "1"]).status == 0)
    }
}

/// inotify on a directory, for catching a writer the instant its temp file
/// appears: an event, with a bounded wait, not a poll.
final class DirectoryWatcher {
    let fd: Int32

    init(path: String) throws {
        fd = inotify_init1(Int32(IN_CLOEXEC) | Int32(IN_NONBLOCK))
        guard fd >= 0, inotify_add_watch(fd, path, UInt32(IN_CREATE | IN_MODIFY)) >= 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
    }

    deinit { close(fd) }

    func drain() {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while read(fd, &buffer, buffer.count) > 0 {}
    }

    /// True once a writer of `name` starts: its temp file `.NAME.*.tmp` is
    /// created, or `name` itself is modified (a writer that writes in place).
    func waitForWriteStart(of name: String, timeoutMilliseconds: Int32) -> Bool {
        let deadline = TestTimeout.deadline(after: Double(timeoutMilliseconds) / 1000)
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while Date() < deadline {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let left = Int32(max(1, deadline.timeIntervalSinceNow * 1000))
            guard poll(&pfd, 1, left) > 0 else { return false }
            let n = read(fd, &buffer, buffer.count)
            guard n > 0 else { continue }
            var offset = 0
            while offset + 16 <= n {
                let length = Int(buffer[offset + 12]) | Int(buffer[offset + 13]) << 8
                    | Int(buffer[offset + 14]) << 16 | Int(buffer[offset + 15]) << 24
                let mask = UInt32(buffer[offset + 4]) | UInt32(buffer[offset + 5]) << 8
                    | UInt32(buffer[offset + 6]) << 16 | UInt32(buffer[offset + 7]) << 24
                let nameBytes = buffer[(offset + 16)..<min(n, offset + 16 + length)].prefix { $0 != 0 }
                let entry = String(decoding: nameBytes, as: UTF8.self)
                if mask & UInt32(IN_CREATE) != 0, entry.hasPrefix(".\(name)."), entry.hasSuffix(".tmp") { return true }
                if mask & UInt32(IN_MODIFY) != 0, entry == name { return true }
                offset += 16 + length
            }
        }
        return false
    }
}
