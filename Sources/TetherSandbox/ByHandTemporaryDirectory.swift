#if canImport(Glibc)
import Glibc
#endif
import SystemPackage
import TetherGroup
import TetherLoop

/// The private TMPDIR of an extension started by hand,
/// `BASE/tether-UID/by-hand/NAME.XXXXXX`, held with `flock` on the
/// directory for as long as its process lives. The process removes its own
/// at exit, but one killed with SIGKILL cannot: so every start first
/// removes the siblings nobody holds. While it lives it holds `inUse`,
/// so another extension started by hand, which may remove empty
/// directories here, cannot remove it.
package enum ByHandTemporaryDirectory {
    /// The file that keeps a live one from being empty.
    package static let inUse = ".tether-in-use"

    /// Removes abandoned siblings, then makes and holds a new one (the
    /// descriptor stays open, close-on-exec, until the process ends).
    package static func make(base: String?, prefix: String) throws(Errno) -> (parent: String, path: String) {
        let parent = try PrivateTemporaryDirectory.byHandParent(base: base)
        removeAbandoned(in: parent)
        for _ in 0..<8 {
            let path = try PrivateTemporaryDirectory.make(in: parent, prefix: prefix)
            let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else { continue }  // another start removed it before we held it
            // Never waited for: a lock taken already is another start's
            // sweep removing it; make another.
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                close(fd)
                continue
            }
            // Never empty while it lives: every confined extension started
            // by hand may remove empty directories here (its own at exit),
            // and so could remove another's empty one. None of them may
            // write in another's, so none can empty it of this.
            let marker = openat(fd, inUse, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if marker >= 0 { close(marker) }
            var info = stat()
            // Still there once held and marked: ours (the descriptor is kept open on purpose).
            if marker >= 0, fstat(fd, &info) == 0, info.st_nlink > 0 { return (parent, path) }
            close(fd)
        }
        throw .resourceTemporarilyUnavailable
    }

    /// Removes every directory in `parent` whose holder is gone (its lock
    /// can be taken), within 2 s in all: what is left waits for the next
    /// start, never holding this one up.
    static func removeAbandoned(in parent: String) {
        let directory = open(parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard directory >= 0 else { return }
        defer { close(directory) }
        let listing = dup(directory)
        guard listing >= 0, let stream = fdopendir(listing) else {
            if listing >= 0 { close(listing) }
            return
        }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = DirectoryEntry.name(entry)
            if name != ".", name != ".." { names.append(name) }
        }
        closedir(stream)
        let deadline = MonotonicClock.seconds() + 2
        for name in names where MonotonicClock.seconds() < deadline {
            let held = openat(directory, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard held >= 0 else { continue }
            if flock(held, LOCK_EX | LOCK_NB) == 0 {
                try? PrivateTemporaryDirectory.remove(parent + "/" + name, deadline: deadline)
            }
            close(held)
        }
    }
}
