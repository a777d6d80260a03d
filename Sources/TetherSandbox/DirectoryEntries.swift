#if canImport(Glibc)
import Glibc
#endif
import TetherGroup

/// The entries of an open directory, "." and ".." left out, read through
/// a duplicate of its descriptor: the caller's stays open. The duplicate
/// shares its offset, so the listing starts by rewinding it. Each name as
/// its bytes (`EntryName`): a call on it reaches that entry.
enum DirectoryEntries {
    /// At most `limit` entries (a directory of a million files costs what
    /// the caller can afford).
    static func read(_ directory: Int32, limit: Int = .max) -> [(name: EntryName, isDirectory: Bool)]? {
        let listing = fcntl(directory, F_DUPFD_CLOEXEC, 0)
        guard listing >= 0 else { return nil }
        guard lseek(listing, 0, SEEK_SET) == 0 else {
            close(listing)
            return nil
        }
        guard let stream = fdopendir(listing) else {
            close(listing)
            return nil
        }
        defer { closedir(stream) }
        var entries: [(name: EntryName, isDirectory: Bool)] = []
        while entries.count < limit, let entry = readdir(stream) {
            let name = DirectoryEntry.entryName(entry)
            if name == dot || name == dotDot { continue }
            entries.append((name, entry.pointee.d_type == DT_DIR))
        }
        return entries
    }

    private static let dot = EntryName("."), dotDot = EntryName("..")
}
