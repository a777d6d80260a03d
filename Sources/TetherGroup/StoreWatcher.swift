#if os(Linux)
import Glibc
import SystemPackage
import TetherLoop

/// Tells its loop when a `SharedStore` file is replaced, by any process.
/// inotify watches the store's directory for the rename that completes every
/// atomic write (IN_MOVED_TO) and for deletions; `uv_poll` reads it. Nothing
/// polls, and a change is reported within one loop turn; when the kernel's
/// queue overflowed, each store whose file is another than last reported.
/// The directory removed or renamed away (the group reset) is waited for
/// where it was, and what it holds then is reported.
package final class StoreWatcher: @unchecked Sendable {
    package let loop: EventLoop
    private let directory: String
    private let names: Set<String>
    private var inotify: Inotify?
    /// The watch on `directory`, and the directory it is; -1 while it is not there.
    private var watched: Int32 = -1
    private var watchedDirectory: FileIdentity?
    /// While `directory` is not there: the nearest directory above it.
    private var awaiting = NearestDirectoryWatch()
    private static let mask = UInt32(IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
    private var onChange: ((String) -> Void)?
    /// Each store's file as last reported (device, inode), nil when absent.
    private var files: [String: FileIdentity?] = [:]

    private struct FileIdentity: Equatable {
        let device: UInt64, inode: UInt64
    }

    private static func identity(_ path: String) -> FileIdentity? {
        (try? Syscall.lstat(path)).map { FileIdentity(device: UInt64($0.st_dev), inode: UInt64($0.st_ino)) }
    }
    /// Alive until `close()`, like a libuv handle: the loop refers to it.
    private var keepAlive: StoreWatcher?

    /// Watches the files at `paths` (all in one directory). `onChange` runs
    /// on the loop with the path of a file that was replaced or removed.
    /// Call on the loop's thread; the watcher lives until `close()`.
    package init(loop: EventLoop, paths: [String], onChange: @escaping (String) -> Void) throws(GroupError) {
        precondition(loop.inEventLoop, "StoreWatcher must be created on its loop's thread")
        self.loop = loop
        let directories = Set(paths.map { path in path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "." })
        guard directories.count == 1, let directory = directories.first else {
            throw .system("watch", path: paths.joined(separator: ", "), .invalidArgument)
        }
        self.directory = directory
        names = Set(paths.map { path in path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path })
        do {
            let inotify = try Inotify(loop: loop)
            self.inotify = inotify
            watched = try inotify.watch(directory, mask: Self.mask)
            watchedDirectory = Self.identity(directory)
            for name in names { files[name] = Self.identity("\(directory)/\(name)") }
            try inotify.start { [unowned self] events in arrived(events) }
        } catch {
            close()
            throw .system("watch", path: directory, error)
        }
        self.onChange = onChange
        keepAlive = self
    }

    private func arrived(_ events: [Inotify.Event]) {
        var changed: [String] = []
        for event in events where event.descriptor == watched && names.contains(event.name)
            && !changed.contains(event.name) {
            changed.append(event.name)
        }
        // A full queue (IN_Q_OVERFLOW) lost what came after: a store whose
        // file is another now (every write renames a new one in) changed.
        // Not every store: anyone who may write in a directory on this loop
        // can overflow it, and each report makes the host tell every widget.
        // The same once the directory is watched again where it was.
        let overflowed = events.contains { $0.mask & UInt32(IN_Q_OVERFLOW) != 0 }
        var lookAtEach = overflowed
        // The directory's own end, or what was awaited, may be among what
        // an overflow lost: then the path is looked at instead.
        let lost = events.contains { $0.descriptor == watched && $0.mask & UInt32(IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF) != 0 }
            || overflowed && (awaiting.descriptor >= 0 || Self.identity(directory) != watchedDirectory)
        if lost || events.contains(where: { awaiting.concerns($0) }) {
            lookAtEach = rewatch() || lookAtEach
        }
        if lookAtEach {
            for name in names.sorted() where !changed.contains(name)
                && Self.identity("\(directory)/\(name)") != files[name] ?? nil {
                changed.append(name)
            }
        }
        for name in changed { files[name] = Self.identity("\(directory)/\(name)") }
        for name in changed { onChange?("\(directory)/\(name)") }
    }

    /// Watches `directory` where it is now, or waits for it to be made
    /// there; true once it is watched.
    private func rewatch() -> Bool {
        if watched >= 0 { inotify?.unwatch(watched) }
        watched = -1
        // Bounded by the path's depth: each round waits one level lower.
        for _ in 0..<64 {
            if let descriptor = try? inotify?.watch(directory, mask: Self.mask) {
                awaiting.end(with: inotify)
                watched = descriptor
                watchedDirectory = Self.identity(directory)
                return true
            }
            guard awaiting.watch(above: FilePath(directory), with: inotify) else { return false }
        }
        return false
    }

    /// Stops watching and releases the watcher. Call on the loop's thread.
    package func close() {
        guard let inotify else { return }
        self.inotify = nil
        inotify.close()
        onChange = nil
        keepAlive = nil
    }
}
#endif
