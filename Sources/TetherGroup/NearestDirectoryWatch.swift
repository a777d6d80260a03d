#if os(Linux)
import Glibc
import SystemPackage

/// What a watcher does while the path it watches is not there (removed, or
/// its directory with it: the group removed): the nearest directory above
/// it that exists is watched for what is made in it, and each event there
/// is the owner's cue to try again, one level lower each time. Nothing polls.
struct NearestDirectoryWatch {
    /// The watch on that directory; -1 while none is needed.
    private(set) var descriptor: Int32 = -1
    /// The entry of that directory on the way to the path.
    private var next = ""

    /// What is made in (or happens to) the directory watched; never through
    /// a symlink planted in a directory's place.
    private static let mask = UInt32(IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW)

    /// Watches the nearest directory above `path` that exists. True if the
    /// owner should try again at once: this call placed a new watch, and the
    /// next step on the way to `path` was made before it, so no event will
    /// say so. (With the watch already in place, one will.)
    mutating func watch(above path: FilePath, with inotify: Inotify?) -> Bool {
        var directory = path
        while directory.removeLastComponent() {
            guard let watched = try? inotify?.watch(directory.string, mask: Self.mask) else { continue }
            guard watched != descriptor else { return false }
            if descriptor >= 0 { inotify?.unwatch(descriptor) }
            descriptor = watched
            guard let next = path.components.dropFirst(directory.components.count).first else { return false }
            self.next = next.string
            return (try? Syscall.lstat(directory.appending(next).string)) != nil
        }
        return false
    }

    /// Whether `event` may mean the way to the path is there now: the next
    /// entry made, the directory itself gone, or events lost. Others (the
    /// rest of what is made in that directory) are not looked at.
    func concerns(_ event: Inotify.Event) -> Bool {
        guard descriptor >= 0 else { return false }
        if event.mask & UInt32(IN_Q_OVERFLOW) != 0 { return true }
        guard event.descriptor == descriptor else { return false }
        return event.name == next || event.mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED) != 0
    }

    /// The path is there again: this watch goes.
    mutating func end(with inotify: Inotify?) {
        guard descriptor >= 0 else { return }
        inotify?.unwatch(descriptor)
        descriptor = -1
    }
}
#endif
