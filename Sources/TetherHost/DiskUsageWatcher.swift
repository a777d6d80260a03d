#if canImport(Glibc)
import Glibc
#endif
import SystemPackage
import TetherGroup
import TetherLoop
import TetherSandbox

/// What each launch's private temporary directory holds, against a limit,
/// where no cgroup counts a tmpfs's pages and no quota exists. inotify
/// says when a tree changed (one instance for every launch: a user may
/// have 128); the tree is then counted again on a thread of its own, at
/// most every quarter of a second, so a flood of files costs the host's
/// loop one flag per event and never a walk (and a fast writer passes the
/// limit by at most what it writes in that time before it is killed). A file counts its size or its blocks,
/// whichever is larger (a sparse file counts whole); a hard link counts
/// each time. Lives on the host's loop.
///
/// Writes through a shared mapping make no event: `RLIMIT_FSIZE` bounds
/// each such file, and its size (set by `ftruncate`, which makes one) is
/// what is counted. A directory whose name is not UTF-8 cannot be watched
/// by its path, nor one made unreadable counted: a tree holding one is over
/// its limit, as one with too many directories is (a file so named is
/// counted like any other).
final class DiskUsageWatcher {
    /// One watched tree.
    struct Tree: Hashable, Sendable {
        fileprivate let id: Int
    }

    private struct Usage {
        let root: String
        let limitBytes: Int64
        let maximumEntries: Int
        let onExceeded: () -> Void
        /// Told each count (bytes, and whether past a bound) instead of
        /// once: the tree is counted on past its limit.
        var onCount: ((Int64, Bool) -> Void)?
        var directories: [Int32: String] = [:]
        var total: Int64 = 0
        var dirty = true
        var counting = false
        var countedAt: UInt64 = 0
        var exceeded = false
    }

    /// A tree with more directories than this is over its limit too: each
    /// directory takes one of the user's inotify watches.
    static let maximumDirectories = 1_024
    /// The least time between two counts of one tree.
    static let countIntervalMilliseconds: UInt64 = 250
    private static let mask = UInt32(IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE
                                     | IN_DONT_FOLLOW | IN_ONLYDIR | IN_EXCL_UNLINK)

    private let loop: EventLoop
    private let inotify: Inotify
    private var trees: [Int: Usage] = [:]
    private var owners: [Int32: Int] = [:]
    private var timers: [Int: LoopTimer] = [:]
    private var nextID = 0

    init(loop: EventLoop) throws(Errno) {
        self.loop = loop
        inotify = try Inotify(loop: loop)
        try inotify.start { [unowned self] events in handle(events) }
    }

    deinit {
        for timer in timers.values { timer.close() }
        inotify.close()
    }

    /// Counts `root` from now on; `onExceeded` is called once, on the
    /// loop, when it holds more than `limitBytes`, more than
    /// `maximumEntries` entries (each count stops there: its cost is
    /// bounded whatever is made there) or more directories than
    /// `maximumDirectories`.
    func watch(_ root: String, limitBytes: Int64, maximumEntries: Int,
               onExceeded: @escaping () -> Void) throws(Errno) -> Tree {
        nextID += 1
        let id = nextID
        let descriptor = try inotify.watch(root, mask: Self.mask)
        trees[id] = Usage(root: root, limitBytes: limitBytes, maximumEntries: maximumEntries, onExceeded: onExceeded,
                          directories: [descriptor: root])
        owners[descriptor] = id
        schedule(id)  // what it holds already
        return Tree(id: id)
    }

    /// Counts `root` from now on, telling `onCount` each count's bytes and
    /// whether it holds more entries or directories than counted (its
    /// bytes then are a floor): for a tree that may shrink again (the
    /// group's shared parts), whose bytes the caller weighs.
    func watch(_ root: String, limitBytes: Int64, maximumEntries: Int,
               onCount: @escaping (Int64, Bool) -> Void) throws(Errno) -> Tree {
        let tree = try watch(root, limitBytes: limitBytes, maximumEntries: maximumEntries, onExceeded: {})
        trees[tree.id]?.onCount = onCount
        return tree
    }

    /// Stops counting (the launch ended); its watches go.
    func unwatch(_ tree: Tree) {
        timers.removeValue(forKey: tree.id)?.close()
        guard let usage = trees.removeValue(forKey: tree.id) else { return }
        for descriptor in usage.directories.keys {
            owners[descriptor] = nil
            inotify.unwatch(descriptor)
        }
    }

    /// The bytes counted under `tree` when it was last counted.
    func bytes(of tree: Tree) -> Int64 { trees[tree.id]?.total ?? 0 }

    private func handle(_ events: [Inotify.Event]) {
        var touched: Set<Int> = []
        for event in events {
            if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
                touched.formUnion(trees.keys)
                continue
            }
            guard let id = owners[event.descriptor] else { continue }
            if event.mask & UInt32(IN_IGNORED) != 0 {
                owners[event.descriptor] = nil
                trees[id]?.directories[event.descriptor] = nil
                continue
            }
            touched.insert(id)
            guard event.mask & UInt32(IN_ISDIR) != 0, !event.name.isEmpty,
                  let directory = trees[id]?.directories[event.descriptor] else { continue }
            let path = directory + "/" + event.name
            if event.mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 {
                add(directory: path, to: id)
            } else if event.mask & UInt32(IN_MOVED_FROM) != 0 {
                forget(directory: path, in: id)
            }
        }
        for id in touched {
            trees[id]?.dirty = true
            schedule(id)
        }
    }

    /// A directory's changes are heard from now on (what it already holds
    /// is found by the next count, which also watches what it finds).
    private func add(directory path: String, to id: Int) {
        guard let usage = trees[id], !usage.exceeded, !usage.directories.values.contains(path) else { return }
        let descriptor: Int32
        do throws(Errno) {
            guard usage.directories.count < Self.maximumDirectories else { throw .noSpace }
            descriptor = try inotify.watch(path, mask: Self.mask)
        } catch .noSuchFileOrDirectory, .notDirectory {
            // Gone (or no directory) before it was looked at: `mktemp -d`
            // and its cleanup. The next count finds what is there.
            return
        } catch {
            // Past the bound, or a directory we cannot watch: it could hold
            // anything (a tree counted on says so at each count instead).
            return usage.onCount == nil ? exceed(id) : ()
        }
        trees[id]?.directories[descriptor] = path
        owners[descriptor] = id
    }

    /// A directory moved out is no longer this tree's (a new one may take its name).
    private func forget(directory path: String, in id: Int) {
        guard let usage = trees[id] else { return }
        for (descriptor, directory) in usage.directories where directory == path || directory.hasPrefix(path + "/") {
            trees[id]?.directories[descriptor] = nil
            owners[descriptor] = nil
            inotify.unwatch(descriptor)
        }
    }

    /// Counts a changed tree now, or when a second has passed since its last count.
    private func schedule(_ id: Int) {
        guard let usage = trees[id], usage.dirty, !usage.counting, !usage.exceeded else { return }
        let due = usage.countedAt + Self.countIntervalMilliseconds
        guard usage.countedAt == 0 || loop.now >= due else {
            guard timers[id]?.isActive != true else { return }
            let timer = timers[id] ?? LoopTimer(loop: loop)
            timers[id] = timer
            timer.start(afterMilliseconds: due - loop.now) { [unowned self] in schedule(id) }
            return
        }
        trees[id]?.dirty = false
        trees[id]?.counting = true
        let (root, entries) = (usage.root, usage.maximumEntries)
        nonisolated(unsafe) let watcher = self  // touched on the loop only
        let finished: @Sendable (DiskCount) -> Void = { [loop] count in
            _ = loop.execute { watcher.counted(count, in: id) }
        }
        do throws(Errno) {
            try DetachedThread.start {
                finished(DiskCount.walk(root, maximumDirectories: Self.maximumDirectories, maximumEntries: entries))
            }
        } catch {
            // No thread to be had: here.
            finished(DiskCount.walk(root, maximumDirectories: Self.maximumDirectories, maximumEntries: entries))
        }
    }

    private func counted(_ count: DiskCount, in id: Int) {
        guard trees[id] != nil else { return }  // unwatched meanwhile
        trees[id]?.counting = false
        trees[id]?.countedAt = loop.now
        trees[id]?.total = count.bytes
        // A directory no path names (not UTF-8) cannot be watched, and one
        // made unreadable cannot be counted: what is written there would
        // go unseen, as past a bound.
        let crowded = count.directories.count > Self.maximumDirectories || count.entries > (trees[id]?.maximumEntries ?? 0)
            || count.unseen > 0
        if let onCount = trees[id]?.onCount {
            for directory in count.directories.prefix(Self.maximumDirectories) { add(directory: directory, to: id) }
            onCount(count.bytes, crowded)
            return schedule(id)
        }
        if crowded { return exceed(id) }
        for directory in count.directories { add(directory: directory, to: id) }
        if let usage = trees[id], usage.total > usage.limitBytes { return exceed(id) }
        schedule(id)  // changed again while it was counted
    }

    private func exceed(_ id: Int) {
        guard let usage = trees[id], !usage.exceeded else { return }
        trees[id]?.exceeded = true
        usage.onExceeded()
    }
}
