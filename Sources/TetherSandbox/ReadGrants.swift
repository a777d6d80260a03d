import CTetherSystem
import Synchronization
import TetherGroup
#if canImport(Glibc)
import Glibc
#endif

/// Read access to the whole file system but some paths, as Landlock rules.
/// Landlock has no deny rule and a grant covers everything beneath it, so
/// instead of "/" this grants, at "/" and at each directory on the way to a
/// hidden path, every entry but the one on the way. Beside hidden secrets,
/// other groups' secrets (`.NAME.secrets`) stay out too. Several paths
/// may be hidden at once (the extensions' temporary directories, every
/// group's secrets this user has made). The directories on the way get no
/// rule of their own, so they cannot be listed: a rule on a directory
/// covers everything beneath it, the hidden path included. Symbolic links
/// are not granted (what they name is reached by its own path). An entry
/// made in one of those directories after the rules are built is not
/// covered: it stays unreadable.
///
/// A directory's entries are opened once (`O_PATH`, kept) and reused while
/// its inode and times are unchanged: a launch then costs one rule per
/// entry, not a listing and an open (a home directory holds hundreds).
/// What a missed change could do is deny, never grant: a cached entry is
/// the inode it was, and a new one is simply not covered. The kept
/// descriptors are bounded (`keptAtMost`): a directory past the bound (a
/// `/tmp` of thousands) is listed each time, each entry closed once its
/// rule is added, so it never runs the process out of descriptors.
package enum ReadGrants {
    /// What `add` did.
    enum Outcome: Equatable {
        /// Every entry granted but what is hidden.
        case hidden
        /// A directory on the way cannot be listed: nothing useful added.
        case cannotList
        /// Descriptors or memory ran out: nothing useful added, and a
        /// moment later it may work.
        case outOfDescriptors
    }

    /// Adds the grants to `ruleset`, hiding `hidden` and `secrets` (and
    /// any `.NAME.secrets` beside the latter).
    /// `listings` gets each directory whose entries were granted, as it was.
    static func add(to ruleset: Int32, abi: Int32, hiding hidden: [String], secrets: [String] = [],
                    listings stamps: inout [DirectoryStamp]) -> Outcome {
        let secrets = Set(secrets.map(canonical))
        let hidden = Set(hidden.map(canonical)).union(secrets)
        var onTheWay: Set<String> = ["/"]
        var besideHidden: Set<String> = []
        for path in hidden {
            var prefix = ""
            for component in path.split(separator: "/").dropLast() {
                prefix += "/" + component
                onTheWay.insert(prefix)
            }
            if secrets.contains(path) { besideHidden.insert(prefix.isEmpty ? "/" : prefix) }
        }
        // By identity too: on a case-insensitive file system another
        // spelling of a name on the way is the same directory.
        var excluded: Set<FileIdentity> = []
        for path in onTheWay.union(hidden) {
            var info = stat()
            if stat(path, &info) == 0 { excluded.insert(FileIdentity(info)) }
        }
        return listings.withLock { listings in
            for directory in onTheWay where !hidden.contains(directory) {
                let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                // Gone (another group's, removed meanwhile): nothing to grant or hide there.
                if fd < 0, errno == ENOENT || errno == ENOTDIR { continue }
                guard fd >= 0 else { return Self.isShortage(errno) ? .outOfDescriptors : .cannotList }
                defer { close(fd) }
                var info = stat()
                guard fstat(fd, &info) == 0 else { return Self.isShortage(errno) ? .outOfDescriptors : .cannotList }
                stamps.append(DirectoryStamp(directory, info))
                // What is left out here, and nothing else: another group
                // hidden elsewhere keeps this listing.
                let skipped = onTheWay.union(hidden).filter { parent(of: $0) == directory }.sorted()
                let cacheKey = ([directory, besideHidden.contains(directory) ? "beside" : ""] + skipped).joined(separator: "\n")
                if let cached = listings[cacheKey], cached.stamp.matches(info) {
                    for child in cached.grants { _ = tether_landlock_allow_read(ruleset, abi, child.fd, child.directory ? 1 : 0) }
                    continue
                }
                listings.removeValue(forKey: cacheKey)?.close()
                let skipping = { (path: String, name: String) in
                    onTheWay.contains(path) || hidden.contains(path)
                        || (besideHidden.contains(directory) && name.hasPrefix(".") && name.hasSuffix(".secrets"))
                }
                let kept = listings.values.reduce(0) { $0 + $1.grants.count }
                var granted = grant(fd, directory, to: ruleset, abi: abi, keeping: max(0, keptAtMost - kept),
                                    excluded: excluded, skipping: skipping)
                if case .outOfDescriptors = granted {
                    // Others' descriptors may be what is short: let go of
                    // every kept listing and try once keeping none. Rules
                    // added twice grant nothing more.
                    for listing in listings.values { listing.close() }
                    listings.removeAll()
                    granted = grant(fd, directory, to: ruleset, abi: abi, keeping: 0, excluded: excluded, skipping: skipping)
                }
                switch granted {
                case .failed: return .cannotList
                case .outOfDescriptors: return .outOfDescriptors
                case .granted(let grants?): listings[cacheKey] = Listing(stamp: DirectoryStamp(directory, info), grants: grants)
                case .granted(nil): break
                }
            }
            return .hidden
        }
    }

    /// Descriptors or memory ran out: a moment later it may work.
    static func isShortage(_ error: Int32) -> Bool { error == EMFILE || error == ENFILE || error == ENOMEM }

    /// Closes what the listings keep open: for a process that confines
    /// itself once.
    static func forget() {
        listings.withLock { listings in
            for listing in listings.values { listing.close() }
            listings.removeAll()
        }
    }

    /// An entry granted: its descriptor (`O_PATH`) and its kind.
    private struct Entry {
        let fd: Int32
        let directory: Bool
    }

    private enum Granted {
        /// The entries' descriptors, kept for the next launch; nil when
        /// there were more than it could keep (all closed).
        case granted([Entry]?)
        /// The directory cannot be listed.
        case failed
        /// Out of descriptors or memory: the grants would be short of what
        /// they say.
        case outOfDescriptors
    }

    /// Grants read on each entry of the directory open at `fd`, opened
    /// `O_PATH` (symbolic links left out), keeping at most `keeping` of
    /// the descriptors; past that, none is kept.
    private static func grant(_ fd: Int32, _ directory: String, to ruleset: Int32, abi: Int32, keeping: Int,
                              excluded: Set<FileIdentity>, skipping: (String, String) -> Bool) -> Granted {
        let listing = dup(fd)
        guard listing >= 0, let stream = fdopendir(listing) else {
            let error = errno
            if listing >= 0 { close(listing) }
            return isShortage(error) ? .outOfDescriptors : .failed
        }
        defer { closedir(stream) }
        // From the start: a copy shares the offset, and a second pass over
        // the same directory (the retry below a shortage) would read
        // nothing, grant nothing, and keep that as the listing.
        rewinddir(stream)
        var kept: [Entry] = []
        var keepsAll = true
        while let entry = readdir(stream) {
            let name = DirectoryEntry.name(entry)
            guard name != ".", name != ".." else { continue }
            if skipping(directory == "/" ? "/" + name : directory + "/" + name, name) { continue }
            // The name's own bytes (it need not be UTF-8).
            let child = DirectoryEntry.withName(entry) { openat(fd, $0, pathOnly | O_NOFOLLOW | O_CLOEXEC) }
            guard child >= 0 else {
                // Gone since the listing: nothing to grant. Out of
                // descriptors: the grants would be short of what they say.
                if isShortage(errno) {
                    kept.forEach { _ = close($0.fd) }
                    return .outOfDescriptors
                }
                continue
            }
            var info = stat()
            guard fstat(child, &info) == 0, info.st_mode & S_IFMT != S_IFLNK, !excluded.contains(FileIdentity(info)) else {
                close(child)
                continue
            }
            let directory = info.st_mode & S_IFMT == S_IFDIR
            _ = tether_landlock_allow_read(ruleset, abi, child, directory ? 1 : 0)
            if keepsAll && kept.count < keeping {
                kept.append(Entry(fd: child, directory: directory))
            } else {
                close(child)
                kept.forEach { _ = close($0.fd) }
                kept.removeAll()
                keepsAll = false
            }
        }
        return .granted(keepsAll ? kept : nil)
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
        let stamp: DirectoryStamp
        let grants: [Entry]

        func close() { for entry in grants { _ = Glibc.close(entry.fd) } }
    }

    private static let listings = Mutex<[String: Listing]>([:])

    /// The descriptors all listings may keep: a quarter of the soft
    /// descriptor limit, at most 8,192. A crowded `/tmp` (a desktop's, a
    /// test machine's: 2,153 entries here) must fit, or every launch lists
    /// it again: 15 ms a launch, most of a launch's cost.
    private static var keptAtMost: Int {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        return descriptorBudget(softLimit: Int(clamping: limit.rlim_cur), few: keepingFew.load(ordering: .relaxed))
    }

    private static let keepingFew = Atomic<Bool>(false)

    /// Set by a host whose launches have worlds of their own: read grants
    /// are then for a launch whose world failed (and for nothing else), so
    /// listings keep few descriptors, and extensions have the rest.
    package static func keepFew(_ few: Bool) { keepingFew.store(few, ordering: .relaxed) }

    /// What the listings may keep under `softLimit` (`few`: see `keepFew`):
    /// the host sets it aside from its connections (`DescriptorLimit`).
    package static func descriptorBudget(softLimit: Int, few: Bool = false) -> Int {
        few ? min(softLimit / 64, 256) : min(softLimit / 4, 8_192)
    }

    /// O_PATH (GNU, so not in Glibc's module): x86-64 and arm64 alike.
    /// Opens nothing: no FIFO blocks, no device wakes.
    private static let pathOnly: Int32 = 0o10_000_000

    private static func parent(of path: String) -> String {
        guard let cut = path.lastIndex(of: "/") else { return path }
        return cut == path.startIndex ? "/" : String(path[..<cut])
    }

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
