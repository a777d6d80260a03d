#if canImport(Glibc)
import Glibc
#endif

/// A count any process of the group adds to without a lock or an fsync:
/// one byte appended per occurrence (O_APPEND makes each append whole),
/// and the count is the file's size. For numbers counted on a hot path,
/// where waiting for a store lock or a disk flush would cost more than the
/// number is worth: token refreshes, counted by every process that
/// refreshes, read by the host for `tether metrics`.
///
/// `DIR/tallies/NAME`, 0600, never followed through a symlink, and refused
/// when its link count is not 1 (as lock and store files are). A byte a
/// refresh costs: a million refreshes make a megabyte.
package struct TallyFile: Sendable {
    package let path: String

    package init(group: GroupDirectory, name: String) throws(GroupError) {
        let directory = group.path + "/tallies"
        try GroupDirectory.ensureDirectory(directory)
        path = "\(directory)/\(name)"
    }

    /// Adds one; false if it could not (best effort: a count is never
    /// worth failing the thing it counts).
    @discardableResult
    package func add() -> Bool {
        // A FIFO planted here fails at once (no reader) or is refused below.
        guard let fd = try? Syscall.open(path, O_WRONLY | O_APPEND | O_CREAT, mode: 0o600) else { return false }
        defer { Syscall.close(fd) }
        guard let info = try? Syscall.fstat(fd), info.st_mode & S_IFMT == S_IFREG, info.st_nlink == 1 else { return false }
        var byte: UInt8 = 0x2b  // "+"
        return Glibc.write(fd, &byte, 1) == 1
    }

    /// The count: 0 before the first, nil when it cannot be read (not a
    /// regular file of its own, or an error) rather than a wrong 0.
    package func count() -> Int64? {
        do {
            let info = try Syscall.lstat(path)
            guard info.st_mode & S_IFMT == S_IFREG, info.st_nlink == 1 else { return nil }
            return Int64(info.st_size)
        } catch .noSuchFileOrDirectory {
            return 0
        } catch {
            return nil
        }
    }
}
