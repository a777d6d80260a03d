import CTetherSystem
import Synchronization
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
///
/// A directory's entries are opened once (`O_PATH`, kept) and reused while
/// its inode and times are unchanged: a launch then costs one rule per
/// entry, not a listing and an open (a home directory holds hundreds).
/// What a missed change could do is deny, never grant: a cached entry is
/// the inode it was, and a new one is simply not covered.
enum ReadGrants {
    /// Adds the grants to `ruleset`; false (nothing useful added) if a
    /// directory on the way cannot be listed.
    static func add(to ruleset: Int32, abi: Int32, hiding hidden: [String]) -> Bool {
        let hidden = Set(hidden.map(canonical))
        var onTheWay: Set<String> = ["/"]
        var besideHidden: Set<String> = []
        for path in hidden {
            var prefix = ""
            for component in path.split(separator: "/").dropLast() {
                prefix += "/" + component
                onTheWay.insert(prefix)
            }
            besideHidden.insert(prefix.isEmpty ? "/" : prefix)
        }
        // By identity too: on a case-insensitive file system another
        // spelling of a name on the way is the same directory.
        var excluded: Set<FileIdentity> = []
        for path in onTheWay.union(hidden) {
            var info = stat()
            if stat(path, &info) == 0 { excluded.insert(FileIdentity(info)) }
        }
        let key = hidden.sorted().joined(separator: "\n")
        return listings.withLock { listings in
            for directory in onTheWay where !hidden.contains(directory) {
                let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                guard fd >= 0 else { return false }
                defer { close(fd) }
                var info = stat()
                guard fstat(fd, &info) == 0 else { return false }
                let cacheKey = key + "\n" + directory
                if let cached = listings[cacheKey], cached.matches(info) {
                    for child in cached.grants { _ = tether_landlock_allow_descriptor(ruleset, abi, child, 0) }
                    continue
                }
                guard let grants = list(fd, directory, excluded: excluded, skipping: { path, name in
                    onTheWay.contains(path) || hidden.contains(path)
                        || (besideHidden.contains(directory) && name.hasPrefix(".") && name.hasSuffix(".secrets"))
                }) else { return false }
                for child in grants { _ = tether_landlock_allow_descriptor(ruleset, abi, child, 0) }
                listings.removeValue(forKey: cacheKey)?.close()
                listings[cacheKey] = Listing(info, grants: grants)
            }
            return true
        }
    }

    /// Closes what the listings keep open: for a process that confines
    /// itself once.
    static func forget() {
        listings.withLock { listings in
            for listing in listings.values { listing.close() }
            listings.removeAll()
        }
    }

    /// The entries of the directory open at `fd` to grant, opened `O_PATH`
    /// (symbolic links left out); nil if it cannot be listed.
    private static func list(_ fd: Int32, _ directory: String, excluded: Set<FileIdentity>,
                             skipping: (String, String) -> Bool) -> [Int32]? {
        let listing = dup(fd)
        guard listing >= 0, let stream = fdopendir(listing) else {
            if listing >= 0 { close(listing) }
            return nil
        }
        defer { closedir(stream) }
        var grants: [Int32] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name != ".", name != ".." else { continue }
            if skipping(directory == "/" ? "/" + name : directory + "/" + name, name) { continue }
            // The name's own bytes (it need not be UTF-8).
            let child = withUnsafeBytes(of: entry.pointee.d_name) { bytes -> Int32 in
                guard let raw = bytes.baseAddress else { return -1 }
                return openat(fd, raw.assumingMemoryBound(to: CChar.self), pathOnly | O_NOFOLLOW | O_CLOEXEC)
            }
            guard child >= 0 else { continue }
            var info = stat()
            if fstat(child, &info) == 0, info.st_mode & S_IFMT != S_IFLNK, !excluded.contains(FileIdentity(info)) {
                grants.append(child)
            } else {
                close(child)
            }
        }
        return grants
    }

    private struct FileIdentity: Hashable {
        let device: UInt64
        let inode: UInt64
        init(_ info: stat) {
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
        }
    }

    /// One directory's grants, and what it was when they were opened.
    private struct Listing {
        let device: UInt64
        let inode: UInt64
        let modified: timespec
        let changed: timespec
        let grants: [Int32]

        init(_ info: stat, grants: [Int32]) {
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            modified = info.st_mtim
            changed = info.st_ctim
            self.grants = grants
        }

        func matches(_ info: stat) -> Bool {
            UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
                && info.st_mtim.tv_sec == modified.tv_sec && info.st_mtim.tv_nsec == modified.tv_nsec
                && info.st_ctim.tv_sec == changed.tv_sec && info.st_ctim.tv_nsec == changed.tv_nsec
        }

        func close() { for fd in grants { _ = Glibc.close(fd) } }
    }

    private static let listings = Mutex<[String: Listing]>([:])

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
