#if os(Linux)
import Glibc
import SystemPackage

/// What a watcher does while the path it watches cannot be watched (its
/// directory went: the group removed): the nearest directory above it that
/// exists is watched for what is made in it, and each event there is the
/// owner's cue to try again, one level lower each time. Nothing polls.
struct NearestDirectoryWatch {
    /// The watch on that directory; -1 while none is needed.
    private(set) var descriptor: Int32 = -1

    /// What is made in (or happens to) the directory watched.
    private static let mask = UInt32(IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

    /// Watches the nearest directory above `path` that exists. True if the
    /// owner should try again at once: the next directory on the way to
    /// `path` was made between its try and this watch, so no event will say
    /// so. (A file there that the owner could not open is not a reason.)
    mutating func watch(above path: FilePath, with inotify: Inotify?) -> Bool {
        var directory = path
        while directory.removeLastComponent() {
            guard let watched = try? inotify?.watch(directory.string, mask: Self.mask) else { continue }
            if descriptor >= 0 && descriptor != watched { inotify?.unwatch(descriptor) }
            descriptor = watched
            guard let next = path.components.dropFirst(directory.components.count).first,
                  let made = try? Syscall.lstat(directory.appending(next).string) else { return false }
            return made.st_mode & S_IFMT == S_IFDIR
        }
        return false
    }

    /// The path could be watched again: this watch goes.
    mutating func end(with inotify: Inotify?) {
        guard descriptor >= 0 else { return }
        inotify?.unwatch(descriptor)
        descriptor = -1
    }
}
#endif
