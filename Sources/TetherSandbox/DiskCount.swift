import CTetherSystem
import TetherGroup
#if canImport(Glibc)
import Glibc
#endif

/// What a directory tree holds: the bytes of its regular files and
/// symlinks (each its size or its blocks, whichever is larger), its entries
/// and the paths of its directories. Read through descriptors, never
/// following a symlink: each directory is opened beneath the root's
/// descriptor with no symlink in any component, so one swapped in for a
/// directory on the way (by the extension that writes the tree, while it
/// is walked) leads nowhere (before Linux 5.6, or where seccomp refuses
/// openat2, by its path, only its last component not followed); and each
/// name is used as its bytes, so one that is not UTF-8 is counted too. An
/// entry that vanishes mid-walk is skipped. Run off the loop.
package struct DiskCount: Sendable {
    package var bytes: Int64 = 0
    /// Below the root, at most `maximumDirectories + 1` (one more says "too many").
    package var directories: [String] = []
    /// Directories that cannot be watched or counted: their path is not
    /// UTF-8 (counted, but no `String` names them for a watch), or they were
    /// made unreadable or unsearchable, the root too (EACCES: what they hold
    /// is unseen). A shortage (EMFILE, ENOMEM) is not counted here.
    package var unseen = 0
    /// Entries seen, at most `maximumEntries + 1` (one more says "too many":
    /// the walk stops there, so its cost is bounded whatever the tree holds).
    package var entries = 0

    package static func walk(_ root: String, maximumDirectories: Int, maximumEntries: Int) -> DiskCount {
        var count = DiskCount()
        let top = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard top >= 0 else {
            if errno == EACCES { count.unseen = 1 }  // the root itself made unreadable
            return count
        }
        defer { close(top) }
        // Relative to the root, without a NUL (empty: the root itself).
        var pending: [[CChar]] = [[]]
        while let relative = pending.popLast() {
            let (fd, error) = relative.isEmpty ? (top, 0) : openBeneath(top, relative, in: root)
            guard fd >= 0 else {
                // Made unreadable: what it holds is unseen. Anything else
                // (gone, swapped for a symlink, out of descriptors) is not
                // the extension's doing that a kill should answer.
                if error == EACCES { count.unseen += 1 }
                continue
            }
            defer { if fd != top { close(fd) } }
            var searchable = true
            for (name, _) in DirectoryEntries.read(fd, limit: maximumEntries + 1 - count.entries) ?? [] {
                count.entries += 1
                guard count.entries <= maximumEntries else { return count }
                var info = stat()
                guard fstatat(fd, name.cString, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
                    // Listed but not searchable (mode 0600): its entries are unseen.
                    if errno == EACCES, searchable {
                        searchable = false
                        count.unseen += 1
                    }
                    continue
                }
                switch info.st_mode & S_IFMT {
                case S_IFREG, S_IFLNK:
                    // A symlink's target is stored too (a page beyond 60 bytes).
                    let size = max(Int64(info.st_size), Int64(info.st_blocks) * 512)
                    let (sum, overflow) = count.bytes.addingReportingOverflow(size)
                    count.bytes = overflow ? .max : sum
                case S_IFDIR:
                    guard count.directories.count + count.unseen <= maximumDirectories else { return count }
                    let child = relative.isEmpty ? Array(name.cString.dropLast()) : relative + [slash] + name.cString.dropLast()
                    if let path = String(validating: child.map { UInt8(bitPattern: $0) }, as: UTF8.self) {
                        count.directories.append(root + "/" + path)
                    } else {
                        count.unseen += 1
                    }
                    pending.append(child)
                default:
                    continue
                }
            }
        }
        return count
    }

    private static let slash = CChar(UInt8(ascii: "/"))

    /// `relative` beneath `top`, the root at `root`. Before Linux 5.6 (no
    /// openat2), or where a seccomp profile refuses it (EPERM), by its
    /// path, its last component not followed.
    /// Its descriptor, or -1 and the errno of the failure.
    private static func openBeneath(_ top: Int32, _ relative: [CChar], in root: String) -> (Int32, Int32) {
        let beneath = relative + [0]
        let fd = tether_open_directory_beneath(top, beneath)
        let error = errno
        guard fd < 0, error == ENOSYS || error == EPERM else { return (fd, error) }
        let path = Array(root.utf8CString.dropLast()) + [slash] + beneath
        let opened = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        return (opened, errno)
    }
}
