import Foundation
import TetherGroup
import TetherSandbox

/// A fresh directory per test, so tests can run in parallel; removed on deinit.
package final class TemporaryDirectory: @unchecked Sendable {
    package let path: String

    package init(_ label: String = "tether-test", in base: String = "/tmp") throws {
        var template = Array("\(base)/\(label).XXXXXX".utf8CString)
        guard let created = template.withUnsafeMutableBufferPointer({ $0.baseAddress.flatMap { mkdtemp($0) } }) else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        path = String(cString: created)
    }

    /// A group directory path inside (not yet created: Tether creates it).
    package var group: String { path + "/group" }

    deinit {
        // Restore permissions a test may have removed, then delete.
        _ = try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: path)
        try? FileManager.default.removeItem(atPath: path)
        // What a host of its group keeps outside it (BASE/tether-UID/HASH):
        // a host the test killed left it for the next host's start, which
        // may never come. Named by the group's path, so it is this test's.
        for root in PrivateTemporaryDirectory.roots(base: ProcessInfo.processInfo.environment["TMPDIR"]) {
            try? FileManager.default.removeItem(atPath: root + "/" + PathHash.hex(group))
        }
    }
}

/// Writes a file through a close-on-exec descriptor, so a process another
/// test spawns meanwhile cannot inherit it (and make the file "text busy"
/// for exec). Foundation's writers do not promise that.
package func writeFile(_ path: String, _ contents: String, mode: mode_t = 0o644) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
    guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    defer { close(fd) }
    let bytes = Array(contents.utf8)
    var written = 0
    while written < bytes.count {
        let n = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        written += n
    }
    fchmod(fd, mode)
}

/// Replaces `path` whole: written beside it, then renamed over it, so a
/// reader sees the old or the new contents, never part. (Foundation's
/// `write(toFile:atomically:)` leaves a `TemporaryDirectory.*` in /tmp for
/// every write on Linux.)
package func replaceFile(_ path: String, _ contents: String, mode: mode_t = 0o644) throws {
    let partial = path + ".partial"
    try writeFile(partial, contents, mode: mode)
    guard rename(partial, path) == 0 else {
        let error = POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        unlink(partial)
        throw error
    }
}
