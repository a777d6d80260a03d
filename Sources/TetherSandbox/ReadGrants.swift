import CTetherSystem
#if canImport(Glibc)
import Glibc
#endif

/// Read access to the whole file system but some paths, as Landlock rules.
/// Landlock has no deny rule and a grant covers everything beneath it, so
/// instead of "/" this grants, at "/" and at each directory on the way to a
/// hidden path, every entry but the one on the way. Beside a hidden path,
/// other groups' secrets (`.NAME.secrets`) stay out too. Symbolic links
/// are not granted (what they name is reached by its own path). An entry
/// made in one of those directories after the rules are built is not
/// covered: it stays unreadable.
enum ReadGrants {
    /// Adds the grants to `ruleset`; false (nothing useful added) if a
    /// directory on the way cannot be listed.
    static func add(to ruleset: Int32, abi: Int32, hiding hidden: [String]) -> Bool {
        let hidden = Set(hidden.map(canonical))
        var onTheWay: Set<String> = ["/"]
        var besideHidden: Set<String> = []
        for path in hidden {
            var prefix = ""
            let components = path.split(separator: "/")
            for component in components.dropLast() {
                prefix += "/" + component
                onTheWay.insert(prefix)
            }
            besideHidden.insert(prefix.isEmpty ? "/" : prefix)
        }
        for directory in onTheWay where !hidden.contains(directory) {
            let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard fd >= 0, let stream = fdopendir(fd) else {
                if fd >= 0 { close(fd) }
                return false
            }
            defer { closedir(stream) }
            while let entry = readdir(stream) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                guard name != ".", name != ".." else { continue }
                let path = directory == "/" ? "/" + name : directory + "/" + name
                if onTheWay.contains(path) || hidden.contains(path) { continue }
                if besideHidden.contains(directory), name.hasPrefix("."), name.hasSuffix(".secrets") { continue }
                let child = openat(dirfd(stream), name, pathOnly | O_NOFOLLOW | O_CLOEXEC)
                guard child >= 0 else { continue }
                var info = stat()
                if fstat(child, &info) == 0, info.st_mode & S_IFMT != S_IFLNK {
                    _ = tether_landlock_allow_descriptor(ruleset, abi, child, 0)
                }
                close(child)
            }
        }
        return true
    }

    /// O_PATH (GNU, so not in Glibc's module): x86-64 and arm64 alike.
    /// Opens nothing: no FIFO blocks, no device wakes.
    private static let pathOnly: Int32 = 0o10_000_000

    /// The path with its parent's symbolic links resolved: rules follow
    /// inodes, so the walk must follow the real directories.
    private static func canonical(_ path: String) -> String {
        guard let cut = path.lastIndex(of: "/"), cut != path.startIndex else { return path }
        let parent = String(path[..<cut])
        guard let resolved = realpath(parent, nil) else { return path }
        defer { free(resolved) }
        let real = String(cString: resolved)
        return (real == "/" ? "" : real) + String(path[cut...])
    }
}
