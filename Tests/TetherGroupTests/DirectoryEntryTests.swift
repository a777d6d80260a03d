import Foundation
import Testing
import TetherGroup
import TetherTestSupport

/// A `readdir` record is as short as its name: the last one of a buffer may
/// end at an unmapped page, and reading its name must stop at its NUL.
@Suite struct DirectoryEntryTests {
    @Test func aNameThatEndsAtAnUnmappedPageIsReadInPlace() throws {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let region = try #require(mmap(nil, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))
        #expect(region != MAP_FAILED)
        defer { munmap(region, 2 * page) }
        #expect(mprotect(region + page, page, PROT_NONE) == 0)
        // The record's name, NUL included, ends where the page does.
        let name = Array("abcdefg".utf8CString.map { UInt8(bitPattern: $0) })
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name) ?? 19
        let record = region + page - name.count - nameOffset
        for (index, byte) in name.enumerated() { record.storeBytes(of: byte, toByteOffset: nameOffset + index, as: UInt8.self) }
        let entry = record.bindMemory(to: dirent.self, capacity: 1)
        #expect(DirectoryEntry.name(entry) == "abcdefg")
        #expect(DirectoryEntry.withName(entry) { strlen($0) } == 7)
    }

    @Test func everyEntryOfACrowdedDirectoryIsNamed() throws {
        let dir = try TemporaryDirectory()
        let names = (0..<2_000).map { "entry-\($0)-" + String(repeating: "x", count: $0 % 40) }
        for name in names { #expect(FileManager.default.createFile(atPath: dir.path + "/" + name, contents: nil)) }
        let stream = try #require(opendir(dir.path))
        defer { closedir(stream) }
        var seen: Set<String> = []
        while let entry = readdir(stream) { seen.insert(DirectoryEntry.name(entry)) }
        #expect(seen == Set(names + [".", ".."]))
    }
}
