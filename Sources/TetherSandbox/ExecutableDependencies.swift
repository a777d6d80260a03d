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
        switch inspect(path) {
        case .script(let interpreter): interpreter.hasPrefix("/") ? [directory(of: interpreter)] : []
        case .elf(_, let runpaths): runpaths
        case .other: []
        }
    }

    /// The files `path` loads besides itself: a script's interpreter, and
    /// the libraries its ELF (or its interpreter's) names, each found where
    /// the RUNPATH of the object that needs it says, as the loader finds
    /// them; transitively, at most `limit`. Libraries the loader would find
    /// in the system's directories are not looked for.
    static func loadedFiles(of path: String, limit: Int = 256) -> [String] {
        var files: [String] = [], pending: [String] = []
        switch inspect(path) {
        case .script(let interpreter) where interpreter.hasPrefix("/") && isELF(interpreter, types: [2, 3]):
            files.append(interpreter)
            pending.append(interpreter)
        case .elf: pending.append(path)
        default: return []
        }
        var seen = Set(files)
        // Each candidate costs a stat: bounded whatever the files name.
        var looks = 0
        while let next = pending.popLast(), files.count < limit, looks < limit * 16 {
            guard case .elf(let needed, let runpaths) = inspect(next) else { continue }
            for name in needed where !name.isEmpty && files.count < limit && looks < limit * 16 {
                let candidates = (name.contains("/") ? [name] : runpaths.map { $0 + "/" + name }).prefix(limit * 16 - looks)
                looks += candidates.count
                // Only an ELF shared object: the author's section headers may
                // name any file (a static program's loader never reads them),
                // and a key in ~/.ssh is no library.
                guard let found = candidates.first(where: isSharedObject), seen.insert(found).inserted else { continue }
                files.append(found)
                pending.append(found)
            }
        }
        return files
    }

    /// Directories of a RUNPATH looked in, at most.
    static let maximumRunpaths = 64

    /// What a file says it needs to run.
    private enum Inspection {
        /// `#!` and the interpreter's path, as written.
        case script(interpreter: String)
        /// `DT_NEEDED` names, and `DT_RUNPATH`/`DT_RPATH` directories,
        /// `$ORIGIN` expanded, absolute ones only.
        case elf(needed: [String], runpaths: [String])
        case other
    }

    private static func inspect(_ path: String) -> Inspection {
        // Not blocking on a FIFO planted at the path; regular files only.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return .other }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return .other }
        var head = [UInt8](repeating: 0, count: 64)
        guard read(fd, &head, 64) >= 4 else { return .other }
        if head[0] == 0x23, head[1] == 0x21 {  // "#!"
            let line = head.dropFirst(2).prefix { $0 != 0x0A && $0 != 0 }
            let interpreter = String(decoding: line, as: UTF8.self).split(separator: " ").first.map(String.init)
            return interpreter.map { .script(interpreter: $0) } ?? .other
        }
        let origin = directory(of: path)
        let entries = dynamicStrings(fd: fd, header: head)
        var runpaths: [String] = []
        for directory in entries.filter({ $0.tag != 1 }).flatMap({ $0.text.split(separator: ":") }) {
            let expanded = String(directory).replacing("${ORIGIN}", with: origin).replacing("$ORIGIN", with: origin)
            // At most 64, each once: a hostile file may name thousands.
            guard runpaths.count < maximumRunpaths else { break }
            if expanded.hasPrefix("/"), !runpaths.contains(expanded) { runpaths.append(expanded) }
        }
        return .elf(needed: entries.filter { $0.tag == 1 }.map(\.text), runpaths: runpaths)
    }

    private static func isSharedObject(_ path: String) -> Bool { isELF(path, types: [3]) }

    /// Whether `path` is a regular file, a little-endian ELF64 of one of
    /// `types` (`e_type`: 2 an executable, 3 a shared object or PIE).
    private static func isELF(_ path: String, types: Set<UInt16>) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, let header = readAt(fd, 0, 18) else { return false }
        return header[0] == 0x7F && header[1] == 0x45 && header[2] == 0x4C && header[3] == 0x46 && header[4] == 2
            && header[5] == 1 && types.contains(le16(header, 0x10))
    }

    /// The directory `path` (absolute) is in: swift-system's, as the manifest loader's.
    package static func directory(of path: String) -> String { FilePath(path).removingLastComponent().string }

    /// `DT_NEEDED` (tag 1), `DT_RPATH` (15) and `DT_RUNPATH` (29) of a
    /// little-endian ELF64 file, in order, from its section headers (the
    /// dynamic section and its string table); at most 1,024.
    private static func dynamicStrings(fd: Int32, header: [UInt8]) -> [(tag: UInt64, text: String)] {
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
        var offsets: [(tag: UInt64, offset: Int)] = []
        for at in stride(from: 0, to: entries.count - 15, by: 16) where offsets.count < 1_024 {
            let tag = le64(entries, at)
            if tag == 0 { break }
            if tag == 1 || tag == 29 || tag == 15, let offset = Int(exactly: le64(entries, at + 8)) {
                offsets.append((tag, offset))
            }
        }
        return offsets.compactMap { entry in
            let (start, overflow) = strings.offset.addingReportingOverflow(entry.offset)
            guard entry.offset < strings.size, !overflow,
                  let bytes = readAt(fd, start, min(4096, strings.size - entry.offset)) else { return nil }
            return (entry.tag, String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self))
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
