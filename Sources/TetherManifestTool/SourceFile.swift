#if canImport(Glibc)
import Glibc
#endif

/// Whole-file reads and writes for the tool, without Foundation: a build
/// tool that starts fast and links little.
enum SourceFile {
    /// The file's bytes, or nil if it cannot be read. Manifests are small:
    /// more than 1 MiB is refused as unreadable.
    static func read(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { return bytes }
            bytes += chunk[..<count]
            if bytes.count > 1 << 20 { return nil }
        }
    }

    /// Writes `text` to `path` through a temporary file and a rename, so a
    /// build that stops midway never leaves half a source file.
    static func write(_ text: String, to path: String) -> Bool {
        let temporary = path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return false }
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else {
                close(fd)
                unlink(temporary)
                return false
            }
            bytes = bytes.dropFirst(written)
        }
        guard close(fd) == 0, rename(temporary, path) == 0 else {
            unlink(temporary)
            return false
        }
        return true
    }

    static func printError(_ line: String) {
        var bytes = Array((line + "\n").utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }
}
