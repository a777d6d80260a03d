#if canImport(Glibc)
import Glibc
#endif
import SystemPackage
import TetherGroup
import TetherLoop

/// The bytes under each launch's private temporary directory, kept as a
/// running total from inotify events (a file made, written, truncated,
/// moved or removed: one `lstat`), so a limit on the whole directory holds
/// where no cgroup counts a tmpfs's pages and no quota exists. One inotify
/// instance for every launch (a user may have 128). Each file counts its
/// size or its blocks, whichever is larger (a sparse file counts whole);
/// a hard link counts each time. Lives on the host's loop.
///
/// Writes through a shared mapping make no event: `RLIMIT_FSIZE` bounds
/// each such file, and its size (set by `ftruncate`, which does) is what
/// is counted.
public final class DiskUsageWatcher {
    /// One watched tree.
    public struct Tree: Hashable, Sendable {
        fileprivate let id: Int
    }

    private struct Usage {
        let root: String
        let limitBytes: Int64
        let onExceeded: () -> Void
        var sizes: [String: Int64] = [:]
        var total: Int64 = 0
        var directories: [Int32: String] = [:]
        var exceeded = false
    }

    /// A directory tree deeper or wider than this is over its limit too:
    /// each directory takes one of the user's inotify watches.
    public static let maximumDirectories = 1_024
    private static let mask = UInt32(IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE
                                     | IN_DONT_FOLLOW | IN_ONLYDIR | IN_EXCL_UNLINK)

    private let inotify: Inotify
    private var trees: [Int: Usage] = [:]
    private var owners: [Int32: Int] = [:]
    private var nextID = 0

    public init(loop: EventLoop) throws(Errno) {
        inotify = try Inotify(loop: loop)
        try inotify.start { [unowned self] events in handle(events) }
    }

    deinit { inotify.close() }

    /// Counts everything under `root` from now on; `onExceeded` is called
    /// once, on the loop, when the total passes `limitBytes` (or the tree
    /// passes `maximumDirectories`).
    public func watch(_ root: String, limitBytes: Int64, onExceeded: @escaping () -> Void) throws(Errno) -> Tree {
        nextID += 1
        trees[nextID] = Usage(root: root, limitBytes: limitBytes, onExceeded: onExceeded)
        try add(directory: root, to: nextID)
        check(nextID)
        return Tree(id: nextID)
    }

    /// Stops counting (the launch ended); its watches go.
    public func unwatch(_ tree: Tree) {
        guard let usage = trees.removeValue(forKey: tree.id) else { return }
        for descriptor in usage.directories.keys {
            owners[descriptor] = nil
            inotify.unwatch(descriptor)
        }
    }

    /// The bytes counted under `tree`.
    public func bytes(of tree: Tree) -> Int64 { trees[tree.id]?.total ?? 0 }

    private func add(directory path: String, to id: Int) throws(Errno) {
        guard var usage = trees[id] else { return }
        guard usage.directories.count < Self.maximumDirectories else {
            usage.total = .max
            trees[id] = usage
            return
        }
        let descriptor = try inotify.watch(path, mask: Self.mask)
        usage.directories[descriptor] = path
        trees[id] = usage
        owners[descriptor] = id
        // What is already there (made before the watch): counted once.
        for entry in DirectoryEntries.names(in: path) { measure(path + "/" + entry, in: id) }
    }

    private func handle(_ events: [Inotify.Event]) {
        var touched: Set<Int> = []
        for event in events {
            if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
                rescanAll()
                return
            }
            if event.mask & UInt32(IN_IGNORED) != 0 {
                if let id = owners.removeValue(forKey: event.descriptor) { trees[id]?.directories[event.descriptor] = nil }
                continue
            }
            guard let id = owners[event.descriptor], let directory = trees[id]?.directories[event.descriptor],
                  !event.name.isEmpty else { continue }
            let path = directory + "/" + event.name
            if event.mask & UInt32(IN_DELETE | IN_MOVED_FROM) != 0 {
                forget(path, in: id)
            } else {
                measure(path, in: id)
            }
            touched.insert(id)
        }
        for id in touched { check(id) }
    }

    /// A regular file's size, or a directory's contents (watched from now).
    private func measure(_ path: String, in id: Int) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return forget(path, in: id) }
        switch info.st_mode & S_IFMT {
        case S_IFREG:
            let size = max(Int64(info.st_size), Int64(info.st_blocks) * 512)
            guard var usage = trees[id] else { return }
            let (sum, overflow) = usage.total.addingReportingOverflow(size - (usage.sizes[path] ?? 0))
            usage.total = overflow ? .max : sum
            usage.sizes[path] = size
            trees[id] = usage
        case S_IFDIR:
            guard trees[id]?.directories.values.contains(path) == false else { return }
            do {
                try add(directory: path, to: id)
            } catch {
                // A directory we cannot watch could hold anything.
                trees[id]?.total = .max
            }
        default:
            return
        }
    }

    /// A file or a whole directory gone (moved out, or removed).
    private func forget(_ path: String, in id: Int) {
        guard var usage = trees[id] else { return }
        let prefix = path + "/"
        for (file, size) in usage.sizes where file == path || file.hasPrefix(prefix) {
            usage.sizes[file] = nil
            if usage.total != .max { usage.total -= size }
        }
        // A directory moved out is no longer this tree's (a new one may
        // take its name).
        for (descriptor, directory) in usage.directories where directory == path || directory.hasPrefix(prefix) {
            usage.directories[descriptor] = nil
            owners[descriptor] = nil
            inotify.unwatch(descriptor)
        }
        trees[id] = usage
    }

    private func check(_ id: Int) {
        guard var usage = trees[id], !usage.exceeded, usage.total > usage.limitBytes else { return }
        usage.exceeded = true
        trees[id] = usage
        usage.onExceeded()
    }

    /// Events were lost: count every tree again from its files.
    private func rescanAll() {
        for (id, usage) in trees {
            trees[id]?.sizes = [:]
            trees[id]?.total = 0
            for path in usage.directories.values {
                for entry in DirectoryEntries.names(in: path) {
                    let full = path + "/" + entry
                    var info = stat()
                    if lstat(full, &info) == 0, info.st_mode & S_IFMT == S_IFREG { measure(full, in: id) }
                }
            }
            check(id)
        }
    }
}
