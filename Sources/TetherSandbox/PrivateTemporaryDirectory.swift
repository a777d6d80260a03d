import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// An extension's own temporary directory (its `TMPDIR`), the only place
/// outside the group it may write: made 0700 with a name no one can guess,
/// and removed with everything in it when the extension ends.
public enum PrivateTemporaryDirectory {
    /// Makes `PARENT/PREFIX.XXXXXX` (and PARENT, 0700, if missing). PARENT
    /// must be a real directory: a symlink planted there is refused.
    public static func make(in parent: String, prefix: String) throws(Errno) -> String {
        if mkdir(parent, 0o700) != 0, errno != EEXIST { throw Errno(rawValue: errno) }
        var info = stat()
        guard lstat(parent, &info) == 0 else { throw Errno(rawValue: errno) }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { throw .notDirectory }
        guard info.st_uid == geteuid() else { throw .notPermitted }
        var template = Array("\(parent)/\(prefix).XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ $0.baseAddress.flatMap { mkdtemp($0) } }) else {
            throw Errno(rawValue: errno)
        }
        return String(cString: made)
    }

    /// Removes `path` and everything beneath it, never following a symlink
    /// (one planted inside is removed, not what it names). Bounded by
    /// `depth`; what it cannot remove stays, and the first error is thrown.
    public static func remove(_ path: String, depth: Int = 64) throws(Errno) {
        let directory = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if directory < 0 {
            if errno == ENOENT { return }
            // Not a directory (or a symlink to one): unlink the name itself.
            guard unlink(path) == 0 || errno == ENOENT else { throw Errno(rawValue: errno) }
            return
        }
        let emptied = removeContents(of: directory, depth: depth)
        guard rmdir(path) == 0 || errno == ENOENT else { throw emptied ?? Errno(rawValue: errno) }
    }

    /// Removes every entry of `PARENT` whose name starts with `PREFIX.`:
    /// what a host killed before it could clean up left behind.
    public static func removeLeftovers(in parent: String, prefix: String) {
        guard let stream = opendir(parent) else { return }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasPrefix(prefix + ".") { names.append(name) }
        }
        closedir(stream)
        for name in names { try? remove("\(parent)/\(name)") }
    }

    /// Takes ownership of `directory` (closes it).
    private static func removeContents(of directory: Int32, depth: Int) -> Errno? {
        guard let stream = fdopendir(directory) else {
            let error = Errno(rawValue: errno)
            close(directory)
            return error
        }
        defer { closedir(stream) }
        var firstError: Errno?
        var names: [(String, isDirectory: Bool)] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name == "." || name == ".." { continue }
            names.append((name, entry.pointee.d_type == DT_DIR))
        }
        for (name, isDirectory) in names {
            if unlinkat(directory, name, 0) == 0 { continue }
            // EISDIR from Linux's unlinkat on a directory (and DT_UNKNOWN filesystems).
            guard errno == EISDIR || errno == EPERM || isDirectory, depth > 0 else {
                if errno != ENOENT { firstError = firstError ?? Errno(rawValue: errno) }
                continue
            }
            let child = openat(directory, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard child >= 0 else {
                if errno != ENOENT { firstError = firstError ?? Errno(rawValue: errno) }
                continue
            }
            if let error = removeContents(of: child, depth: depth - 1) { firstError = firstError ?? error }
            if unlinkat(directory, name, AT_REMOVEDIR) != 0, errno != ENOENT {
                firstError = firstError ?? Errno(rawValue: errno)
            }
        }
        return firstError
    }
}
