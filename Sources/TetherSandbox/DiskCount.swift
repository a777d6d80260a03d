#if canImport(Glibc)
import Glibc
#endif

/// What a directory tree holds: the bytes of its regular files and
/// symlinks (each its size or its blocks, whichever is larger), its entries
/// and the paths of its directories. Read through descriptors, never following a symlink;
/// an entry that vanishes mid-walk is skipped. Run off the loop.
package struct DiskCount: Sendable {
    package var bytes: Int64 = 0
    /// Below the root, at most `maximumDirectories + 1` (one more says "too many").
    package var directories: [String] = []
    /// Entries seen, at most `maximumEntries + 1` (one more says "too many":
    /// the walk stops there, so its cost is bounded whatever the tree holds).
    package var entries = 0

    package static func walk(_ root: String, maximumDirectories: Int, maximumEntries: Int) -> DiskCount {
        var count = DiskCount()
        var pending: [String] = [root]
        while let directory = pending.popLast() {
            let fd = open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            for (name, _) in DirectoryEntries.read(fd, limit: maximumEntries + 1 - count.entries) ?? [] {
                count.entries += 1
                guard count.entries <= maximumEntries else { return count }
                var info = stat()
                guard fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
                switch info.st_mode & S_IFMT {
                case S_IFREG, S_IFLNK:
                    // A symlink's target is stored too (a page beyond 60 bytes).
                    let size = max(Int64(info.st_size), Int64(info.st_blocks) * 512)
                    let (sum, overflow) = count.bytes.addingReportingOverflow(size)
                    count.bytes = overflow ? .max : sum
                case S_IFDIR:
                    guard count.directories.count <= maximumDirectories else { return count }
                    let path = directory + "/" + name
                    count.directories.append(path)
                    pending.append(path)
                default:
                    continue
                }
            }
        }
        return count
    }
}
