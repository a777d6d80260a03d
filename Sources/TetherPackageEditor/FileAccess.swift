#if canImport(Glibc)
import Glibc
#endif

struct SystemError: Error, CustomStringConvertible {
    let description: String
    init(_ what: String) { description = "\(what): \(String(cString: strerror(errno)))" }
}

/// The whole file, or nil.
func readFile(_ path: String) -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        guard count >= 0 else { return nil }
        if count == 0 { break }
        bytes += buffer[..<count]
    }
    return bytes
}

/// Writes a temporary file beside `path` (same mode), then renames it over
/// `path`: a reader sees the old manifest or the new one, never half.
func writeFileAtomically(_ path: String, _ text: String) throws {
    var info = stat()
    let mode = stat(path, &info) == 0 ? info.st_mode & 0o7777 : 0o644
    let temporary = path + ".tether-new"
    let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode)
    guard fd >= 0 else { throw SystemError("open \(temporary)") }
    let bytes = Array(text.utf8)
    var written = 0
    while written < bytes.count {
        let count = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else {
            close(fd)
            unlink(temporary)
            throw SystemError("write \(temporary)")
        }
        written += count
    }
    let synced = fsync(fd) == 0
    guard close(fd) == 0, synced else {
        unlink(temporary)
        throw SystemError("write \(temporary)")
    }
    guard rename(temporary, path) == 0 else {
        unlink(temporary)
        throw SystemError("rename \(temporary)")
    }
}

/// One line to standard error.
func printError(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
}
