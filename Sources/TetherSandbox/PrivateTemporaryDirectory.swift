import CTetherSystem
import TetherGroup
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// An extension's own temporary directory (its `TMPDIR`), the only place
/// outside the group it may write: made 0700 with a name no one can guess,
/// and removed with everything in it when the extension ends.
package enum PrivateTemporaryDirectory {
    /// Where a host keeps its extensions' directories: `BASE/tether-UID/G`,
    /// G a hash of the group's path (one group's leftovers are its own),
    /// BASE the host's TMPDIR or /tmp. Outside the group on purpose: no
    /// extension can write there, so none can swap a directory the host
    /// is about to name in a rule or remove. Every level is made 0700 and
    /// must be ours, a real directory, closed to others.
    package static func hostParent(group: String, base: String?) throws(Errno) -> String {
        let user = try ownedDirectory(userDirectory(base: base))
        let parent = try ownedDirectory(user + "/" + PathHash.hex(group))
        // Names its group, so that a host of any group can tell when this
        // one's group is gone (`removeOrphans`).
        if symlink(group, parent + "/" + groupLink) != 0, errno != EEXIST { throw Errno(rawValue: errno) }
        return parent
    }

    /// The symlink in a host's parent that names its group.
    static let groupLink = "group"

    /// Removes the host parent of `group` if nothing but its group link is
    /// left in it (a host that stops cleanly leaves nothing behind).
    package static func removeHostParentIfEmpty(group: String, base: String?) {
        let parent = userDirectory(base: base) + "/" + PathHash.hex(group)
        guard unlink(parent + "/" + groupLink) == 0 else { return }
        if rmdir(parent) != 0 {
            // Still holding something: keep naming its group.
            _ = symlink(group, parent + "/" + groupLink)
        }
    }

    /// The parents whose group no longer exists (a test's, a removed
    /// group's), with whatever a killed host left in them: no host can ever
    /// run there again to remove it.
    package static func removeOrphans(base: String?) {
        let user = userDirectory(base: base)
        let directory = open(user, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard directory >= 0 else { return }
        defer { close(directory) }
        var info = stat()
        guard fstat(directory, &info) == 0, info.st_uid == geteuid(), info.st_mode & 0o077 == 0 else { return }
        var orphans: [String] = []
        for name in (DirectoryEntries.read(directory) ?? []).compactMap(\.name.exactText) {
            guard name.utf8.count == 16, name.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) })
            else { continue }
            var target = [CChar](repeating: 0, count: 4097)
            let length = readlinkat(directory, name + "/" + groupLink, &target, 4096)
            // No link: made by an older host, or being made now. Leave it.
            guard length > 0 else { continue }
            let group = String(decoding: target[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            var groupInfo = stat()
            if lstat(group, &groupInfo) != 0, errno == ENOENT { orphans.append(name) }
        }
        for name in orphans { _ = TreeRemoval.remove(name, in: directory, deadline: nil) }
    }

    /// Where an extension started by hand keeps its own: `BASE/tether-UID/by-hand`.
    package static func byHandParent(base: String?) throws(Errno) -> String {
        try ownedDirectory(ownedDirectory(userDirectory(base: base)) + "/by-hand")
    }

    /// Every `BASE/tether-UID` an extension's temporary directory may be in:
    /// `base`'s and /tmp's (an extension started by hand without TMPDIR).
    package static func roots(base: String?) -> [String] {
        let roots = [userDirectory(base: base), userDirectory(base: nil)]
        return roots[0] == roots[1] ? [roots[0]] : roots
    }

    private static func userDirectory(base: String?) -> String {
        let root = base.flatMap { $0.hasPrefix("/") && $0.count > 1 ? $0 : nil } ?? "/tmp"
        return (root.hasSuffix("/") ? String(root.dropLast()) : root) + "/tether-\(geteuid())"
    }

    /// `path`, made 0700 if missing; refused unless it is a real directory
    /// of ours that no one else may enter.
    static func ownedDirectory(_ path: String) throws(Errno) -> String {
        if mkdir(path, 0o700) != 0, errno != EEXIST { throw Errno(rawValue: errno) }
        var info = stat()
        guard lstat(path, &info) == 0 else { throw Errno(rawValue: errno) }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { throw .notDirectory }
        guard info.st_uid == geteuid(), info.st_mode & 0o077 == 0 else { throw .notPermitted }
        return path
    }

    /// Makes `PARENT/PREFIX.XXXXXX` (and PARENT, 0700, if missing). PARENT
    /// must be a real directory of ours, closed to others (`ownedDirectory`):
    /// a symlink planted there is refused.
    package static func make(in parent: String, prefix: String) throws(Errno) -> String {
        _ = try ownedDirectory(parent)
        var template = Array("\(parent)/\(prefix).XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ $0.baseAddress.flatMap { mkdtemp($0) } }) else {
            throw Errno(rawValue: errno)
        }
        return String(cString: made)
    }

    /// Renames `path`, a directory `make` made in `parent`, to
    /// `PARENT/PREFIX.XXXXXX`, never replacing an entry: a spare made
    /// before the extension that uses it was known. The same directory,
    /// so the rules that name it still hold.
    package static func rename(_ path: String, in parent: String, prefix: String) throws(Errno) -> String {
        _ = try ownedDirectory(parent)
        let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
        for _ in 0..<100 {
            let suffix = String(decoding: (0..<6).map { _ in letters[Int.random(in: 0..<letters.count)] }, as: UTF8.self)
            let target = "\(parent)/\(prefix).\(suffix)"
            guard tether_renameat2(AT_FDCWD, path, AT_FDCWD, target, TETHER_RENAME_NOREPLACE) == 0 else {
                guard errno == EEXIST else { throw Errno(rawValue: errno) }
                continue
            }
            // Still what `make` made, whatever waited beside it: an empty
            // directory of ours, closed to others. Else it goes.
            let directory = open(target, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            var info = stat()
            let intact = directory >= 0 && fstat(directory, &info) == 0 && info.st_uid == geteuid()
                && info.st_mode & 0o777 == 0o700 && (DirectoryEntries.read(directory)?.isEmpty ?? false)
            if directory >= 0 { close(directory) }
            guard intact else {
                try? remove(target)
                throw .notPermitted
            }
            return target
        }
        throw .fileExists
    }

    /// Removes `path` and everything beneath it, at any depth, never
    /// following a symlink (`TreeRemoval`). By `deadline` (monotonic
    /// seconds) at the latest: what is left then stays, and the first error
    /// (`.timedOut` for the deadline) is thrown.
    package static func remove(_ path: String, deadline: Double? = nil) throws(Errno) {
        guard let cut = path.lastIndex(of: "/") else { throw .invalidArgument }
        let name = String(path[path.index(after: cut)...])
        guard !name.isEmpty, name != ".", name != ".." else { throw .invalidArgument }
        // By name in its parent, so the top is checked like every level.
        let parent = open(cut == path.startIndex ? "/" : String(path[..<cut]),
                          RemovableDirectory.pathOnly | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard parent >= 0 else {
            if errno == ENOENT { return }
            throw Errno(rawValue: errno)
        }
        defer { close(parent) }
        if let error = TreeRemoval.remove(name, in: parent, deadline: deadline) { throw error }
    }

    /// Removes every entry of `PARENT` named `PREFIX.` and mkdtemp's six
    /// characters, for any of `prefixes`: what a host killed before it could
    /// clean up left behind. Not another prefix that starts with one of
    /// these and a dot. One read of the parent for all: a host of 3,000
    /// extensions reading it for each took a tenth of its stop. The parent
    /// must be ours (it is never followed through a symlink).
    package static func removeLeftovers(in parent: String, prefixes: Set<String>) {
        let directory = open(parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard directory >= 0 else { return }
        defer { close(directory) }
        var info = stat()
        guard fstat(directory, &info) == 0, info.st_uid == geteuid() else { return }
        // Tether's names are ASCII; decoded, another could name nothing.
        let names = (DirectoryEntries.read(directory) ?? []).compactMap(\.name.exactText).filter { name in
            let bytes = Array(name.utf8)
            guard bytes.count > 7, bytes[bytes.count - 7] == UInt8(ascii: "."),
                  !bytes.suffix(6).contains(UInt8(ascii: ".")) else { return false }
            return prefixes.contains(String(decoding: bytes.dropLast(7), as: UTF8.self))
        }
        for name in names { _ = TreeRemoval.remove(name, in: directory, deadline: nil) }
    }
}
