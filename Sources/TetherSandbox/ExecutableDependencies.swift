import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// Where an executable finds what it loads, beyond the system's own
/// directories: its ELF `RUNPATH`/`RPATH` (a Swift program's toolchain
/// runtime, `$ORIGIN` expanded), or a script's interpreter. What an
/// extension's world binds read-only so the program still starts there.
package enum ExecutableDependencies {
    /// Directories (absolute, unchecked) `path` needs besides its own.
    static func directories(of path: String) -> [String] {
        // Not blocking on a FIFO planted at the path; regular files only.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return [] }
        var head = [UInt8](repeating: 0, count: 64)
        guard read(fd, &head, 64) >= 4 else { return [] }
        if head[0] == 0x23, head[1] == 0x21 {  // "#!"
            let line = head.dropFirst(2).prefix { $0 != 0x0A && $0 != 0 }
            let interpreter = String(decoding: line, as: UTF8.self).split(separator: " ").first.map(String.init)
            guard let interpreter, interpreter.hasPrefix("/") else { return [] }
            return [directory(of: interpreter)]
        }
        let origin = directory(of: path)
        return runpaths(fd: fd, header: head).flatMap { $0.split(separator: ":") }.map {
            String($0).replacing("${ORIGIN}", with: origin).replacing("$ORIGIN", with: origin)
        }.filter { $0.hasPrefix("/") }
    }

    /// The directory `path` (absolute) is in: swift-system's, as the manifest loader's.
    package static func directory(of path: String) -> String { FilePath(path).removingLastComponent().string }

    /// `DT_RUNPATH` and `DT_RPATH` of a little-endian ELF64 file, from its
    /// section headers (the dynamic section and its string table).
    private static func runpaths(fd: Int32, header: [UInt8]) -> [String] {
        guard header.count >= 64, header[0] == 0x7F, header[1] == 0x45, header[2] == 0x4C, header[3] == 0x46,
              header[4] == 2, header[5] == 1 else { return [] }
        // Every number is the file's: none may trap (a hostile ELF still execs).
        guard let sectionOffset = Int(exactly: le64(header, 0x28)) else { return [] }
        let sectionSize = Int(le16(header, 0x3A)), sectionCount = Int(le16(header, 0x3C))
        guard sectionSize >= 64, sectionCount > 0, sectionCount < 4096,
              let sections = readAt(fd, sectionOffset, sectionSize * sectionCount) else { return [] }
        func section(_ index: Int) -> (type: UInt32, offset: Int, size: Int, link: Int)? {
            guard index < sectionCount else { return nil }
            let base = index * sectionSize
            guard let offset = Int(exactly: le64(sections, base + 0x18)), let size = Int(exactly: le64(sections, base + 0x20))
            else { return nil }
            return (le32(sections, base + 4), offset, size, Int(le32(sections, base + 0x28)))
        }
        guard let dynamic = (0..<sectionCount).lazy.compactMap(section).first(where: { $0.type == 6 }),
              dynamic.size <= 1 << 20, let strings = section(dynamic.link), strings.size <= 1 << 24,
              let entries = readAt(fd, dynamic.offset, dynamic.size) else { return [] }
        var offsets: [Int] = []
        for at in stride(from: 0, to: entries.count - 15, by: 16) {
            let tag = le64(entries, at)
            if tag == 0 { break }
            if tag == 29 || tag == 15, let offset = Int(exactly: le64(entries, at + 8)) { offsets.append(offset) }
        }
        return offsets.compactMap { offset in
            let (start, overflow) = strings.offset.addingReportingOverflow(offset)
            guard offset < strings.size, !overflow, let bytes = readAt(fd, start, min(4096, strings.size - offset))
            else { return nil }
            return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    private static func readAt(_ fd: Int32, _ offset: Int, _ count: Int) -> [UInt8]? {
        guard offset >= 0, count > 0, count <= 1 << 24 else { return nil }
        var bytes = [UInt8](repeating: 0, count: count)
        let got = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
        return got == count ? bytes : nil
    }

    private static func le16(_ bytes: [UInt8], _ at: Int) -> UInt16 { UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8 }
    private static func le32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(bytes[at + $1]) << (8 * $1) }
    }
    private static func le64(_ bytes: [UInt8], _ at: Int) -> UInt64 {
        (0..<8).reduce(0) { $0 | UInt64(bytes[at + $1]) << (8 * $1) }
    }
}
