#if os(Linux)
import Glibc
import SystemPackage
import TetherLoop

/// Reports when a lock's holder appears or disappears, driven by the event
/// loop: inotify on the lock file, read through `uv_poll`. Nothing polls.
///
/// A holder appearing writes its record into the file (IN_MODIFY). A holder
/// going away closes its descriptor (IN_CLOSE_*): a Tether holder unlocks
/// before closing, but a crashed one does not, and the kernel sends the close
/// event a moment *before* it drops the locks of a dying process. So after an
/// open or close event that did not change the answer, the watcher looks
/// again on a short, bounded schedule (1 ms doubling to 128 ms), then goes
/// back to waiting. The watcher probes through a descriptor it keeps open,
/// so its own probes raise no events.
package final class LockWatcher: @unchecked Sendable {
    package let path: String
    /// The latest answer, holder included when known.
    package private(set) var status: LockStatus
    package let loop: EventLoop

    private var fd: Int32
    private var file: stat
    private var inotify: Inotify?
    private let recheck: LoopTimer
    /// The short look-again schedule after an event that changed nothing.
    private var rechecks = LockRecheck()
    private var onChange: ((LockStatus) -> Void)?
    private var closed = false
    /// The watch on the file probed.
    private var watched: Int32 = -1
    /// While the file is not there (unlinked, or its directory with it):
    /// it is not made again here (an `rm -rf` of the group would fail), but
    /// waited for, and a missing lock reads as not running.
    private var awaiting = NearestDirectoryWatch()
    /// Like a libuv handle, an open watcher stays alive until `close()`:
    /// its loop callbacks refer to it.
    private var keepAlive: LockWatcher?

    private static let eventMask: UInt32 = UInt32(IN_MODIFY | IN_ATTRIB | IN_OPEN | IN_CLOSE_WRITE
        | IN_CLOSE_NOWRITE | IN_DELETE_SELF | IN_MOVE_SELF)

    /// Starts watching `path` (creating the lock file if needed). Call on the
    /// loop's thread. `onChange` runs on the loop each time `running` flips;
    /// the current answer is in `status` from the start.
    package init(loop: EventLoop, path: String, onChange: @escaping (LockStatus) -> Void) throws(GroupError) {
        precondition(loop.inEventLoop, "LockWatcher must be created on its loop's thread")
        self.loop = loop
        self.path = path
        guard let opened = try LockFile.open(path, .watch) else {
            throw .system("open lock file", path: path, .noSuchFileOrDirectory)
        }
        fd = opened.fd
        file = opened.info
        recheck = LoopTimer(loop: loop)
        status = .notRunning
        do {
            let inotify = try Inotify(loop: loop)
            self.inotify = inotify
            try addWatch()
            try inotify.start { [unowned self] events in eventsArrived(events) }
        } catch {
            close()
            throw .system("watch", path: path, error)
        }
        status = (try? probe()) ?? .notRunning
        self.onChange = onChange
        keepAlive = self
    }

    /// Stops watching and releases the watcher. Call on the loop's thread.
    package func close() {
        guard !closed else { return }
        closed = true
        onChange = nil
        keepAlive = nil
        inotify?.close()
        recheck.close()
        Syscall.close(fd)
    }

    private func addWatch() throws(Errno) {
        // Watching /proc/self/fd/N pins the watch to the very inode we probe.
        watched = try inotify?.watch("/proc/self/fd/\(fd)", mask: Self.eventMask) ?? -1
    }

    private func probe() throws(GroupError) -> LockStatus {
        try LockProbe.status(fd: fd, file: file, path: path, identifyHolder: true, keepsDescriptor: true)
    }

    private func eventsArrived(_ events: [Inotify.Event]) {
        guard !closed else { return }
        // While the file is not there, only what may bring it back counts.
        let awaited = events.contains { awaiting.concerns($0) }
        let mask = events.reduce(0) { $0 | (awaiting.descriptor >= 0 && $1.descriptor == awaiting.descriptor ? 0 : $1.mask) }
        // The file unlinked says only IN_ATTRIB (its link count: the
        // watcher's own descriptor keeps it from IN_DELETE_SELF), and after
        // an overflow (IN_Q_OVERFLOW) its events may be lost: either way
        // the path is followed if it names another file now.
        if awaited || mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED) != 0
            || mask & UInt32(IN_ATTRIB | IN_Q_OVERFLOW) != 0 && pathNamesAnotherFile { reopen() }
        // Still not there: what happens in a directory above says nothing
        // of a holder (whoever writes there would make this watcher look
        // eight times an event); the old file's own events still do.
        guard awaiting.descriptor < 0 else {
            if mask & Self.eventMask != 0 { reprobe() }
            return
        }
        if !reprobe() { armRecheck() }
    }

    /// Someone removed or renamed the lock file: follow the path to the
    /// file that now stands there (created if need be).
    private var pathNamesAnotherFile: Bool {
        guard let now = try? Syscall.lstat(path) else { return true }
        return now.st_dev != file.st_dev || now.st_ino != file.st_ino
    }

    /// Where it is not there (or cannot be opened), the nearest directory
    /// above it is watched until it is: each event there tries again.
    private func reopen() {
        // Bounded by the path's depth: each round watches one level lower.
        for _ in 0..<64 {
            guard let opened = (try? LockFile.open(path, .probe)) ?? nil else {
                guard awaiting.watch(above: FilePath(path), with: inotify) else { return }
                continue
            }
            awaiting.end(with: inotify)
            // The old file's watch (unless the kernel dropped it with the file).
            if watched >= 0 { inotify?.unwatch(watched) }
            Syscall.close(fd)
            fd = opened.fd
            file = opened.info
            try? addWatch()
            return
        }
    }

    /// Probes again; true if `running` flipped (and `onChange` was told).
    @discardableResult
    private func reprobe() -> Bool {
        guard !closed, let new = try? probe() else { return false }
        let flipped = new.running != status.running
        status = new
        if flipped { onChange?(new) }
        return flipped
    }

    private func armRecheck() {
        rechecks.eventSeen()
        scheduleRecheck()
    }

    private func scheduleRecheck() {
        guard let delay = rechecks.delay else { return }
        rechecks.lookedAgain()
        recheck.start(afterMilliseconds: delay) { [unowned self] in
            if !self.reprobe() { self.scheduleRecheck() }
        }
    }
}
#endif
