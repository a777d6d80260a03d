#if os(Linux)
import Glibc
import SystemPackage
import TetherLoop

/// Tells its loop when a `SharedStore` file is replaced, by any process.
/// inotify watches the store's directory for the rename that completes every
/// atomic write (IN_MOVED_TO) and for deletions; `uv_poll` reads it. Nothing
/// polls, and a change is reported within one loop turn; when the kernel's
/// queue overflowed, each store whose file is another than last reported.
package final class StoreWatcher: @unchecked Sendable {
    package let loop: EventLoop
    private let names: Set<String>
    private var inotify: Inotify?
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
        names = Set(paths.map { path in path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path })
        do {
            let inotify = try Inotify(loop: loop)
            self.inotify = inotify
            try inotify.watch(directory, mask: UInt32(IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE | IN_ONLYDIR))
            for name in names { files[name] = Self.identity("\(directory)/\(name)") }
            try inotify.start { [unowned self] events in
                var changed: [String] = []
                for event in events where names.contains(event.name) && !changed.contains(event.name) {
                    changed.append(event.name)
                }
                // A full queue (IN_Q_OVERFLOW) lost what came after: a store
                // whose file is another now (every write renames a new one
                // in) changed. Not every store: anyone who may write in a
                // directory on this loop can overflow it, and each report
                // makes the host tell every widget.
                if events.contains(where: { $0.mask & UInt32(IN_Q_OVERFLOW) != 0 }) {
                    for name in names.sorted() where !changed.contains(name)
                        && Self.identity("\(directory)/\(name)") != files[name] ?? nil {
                        changed.append(name)
                    }
                }
                for name in changed { files[name] = Self.identity("\(directory)/\(name)") }
                for name in changed { self.onChange?("\(directory)/\(name)") }
            }
        } catch {
            close()
            throw .system("watch", path: directory, error)
        }
        self.onChange = onChange
        keepAlive = self
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
