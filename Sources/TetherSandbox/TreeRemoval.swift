import CTetherSystem
import SystemPackage
import TetherGroup
import TetherLoop
#if canImport(Glibc)
import Glibc
#endif

/// Removes what is inside an open directory, a tree of any depth, never
/// following a symlink (one planted inside is removed, not what it names),
/// and changing nothing but the tree's own directories
/// (`RemovableDirectory`), even while its extension swaps entries.
///
/// It holds at most `maximumDepth` descriptors and never recurses deeper:
/// a directory found that deep is first moved up to the top (a rename
/// within the tree), then removed from there in a later pass. No `..` is
/// ever opened, so a tree moved while it runs cannot lead it outside.
/// Bounded by a deadline and a number of passes; what it could not remove
/// stays.
struct TreeRemoval {
    static let maximumDepth = 16

    private let top: Int32
    private let deadline: Double?
    private var movedUp = 0
    private(set) var firstError: Errno?

    /// `top` stays the caller's to close.
    init(top: Int32, deadline: Double?) {
        self.top = top
        self.deadline = deadline
    }

    /// Removes the entry `name` of `parent`, a tree or not, by `deadline`
    /// (monotonic seconds) at the latest; the first error, if any.
    static func remove(_ name: String, in parent: Int32, deadline: Double?) -> Errno? {
        remove(EntryName(name), in: parent, deadline: deadline)
    }

    static func remove(_ name: EntryName, in parent: Int32, deadline: Double?) -> Errno? {
        if unlinkat(parent, name.cString, 0) == 0 || errno == ENOENT { return nil }
        // EACCES too: Landlock refuses to unlink a directory where it may
        // only remove directories (an extension removing its own TMPDIR).
        let unlinkError = Errno(rawValue: errno)
        guard [.isDirectory, .notPermitted, .permissionDenied].contains(unlinkError) else { return unlinkError }
        let top: Int32
        switch RemovableDirectory.open(name, in: parent) {
        case .success(let opened): top = opened
        case .failure(.noSuchFileOrDirectory): return nil
        case .failure(.notDirectory): return unlinkError
        case .failure(let error): return error
        }
        var removal = TreeRemoval(top: top, deadline: deadline)
        removal.run()
        close(top)
        if unlinkat(parent, name.cString, AT_REMOVEDIR) == 0 || errno == ENOENT { return nil }
        return removal.firstError ?? Errno(rawValue: errno)
    }

    var timedOut: Bool { deadline.map { MonotonicClock.seconds() >= $0 } ?? false }

    /// Empties `top`: passes over it until nothing is left, nothing more
    /// can be removed, the deadline passes or the passes run out.
    mutating func run() {
        for _ in 0..<Self.maximumPasses {
            guard !timedOut else { return note(.timedOut) }
            guard let names = DirectoryEntries.read(top) else { return note(Errno(rawValue: errno)) }
            if names.isEmpty { return }
            let before = progress
            for (name, isDirectory) in names {
                _ = removeEntry(name, in: top, isDirectory: isDirectory, level: 1)
                if timedOut { return note(.timedOut) }
            }
            // Nothing removed and nothing moved up (a name that vanished is
            // no progress: listed again, it would be tried forever): what
            // is left cannot go.
            if progress == before { return }
        }
    }

    /// Passes at most (a tree some 15,000 levels deep takes a thousand),
    /// so that a writer that never stops cannot hold it forever.
    static let maximumPasses = 1_000

    /// Entries removed and directories moved up so far.
    private var progress = 0

    /// Removes `name` of `directory`; true when it is gone.
    private mutating func removeEntry(_ name: EntryName, in directory: Int32, isDirectory: Bool, level: Int) -> Bool {
        if unlinkat(directory, name.cString, 0) == 0 {
            progress += 1
            return true
        }
        if errno == ENOENT { return true }
        // EISDIR from Linux's unlinkat on a directory (and DT_UNKNOWN filesystems).
        guard errno == EISDIR || errno == EPERM || isDirectory else {
            note(Errno(rawValue: errno))
            return false
        }
        if level >= Self.maximumDepth { return moveUp(name, in: directory) }
        let child: Int32
        switch RemovableDirectory.open(name, in: directory) {
        case .success(let opened): child = opened
        case .failure(.noSuchFileOrDirectory): return true
        // Swapped since it was listed (a symlink now, say): the next pass unlinks it.
        case .failure(.notDirectory): return false
        case .failure(let error):
            note(error)
            return false
        }
        defer { close(child) }
        for (entry, entryIsDirectory) in DirectoryEntries.read(child) ?? [] {
            _ = removeEntry(entry, in: child, isDirectory: entryIsDirectory, level: level + 1)
            if timedOut { return false }
        }
        if unlinkat(directory, name.cString, AT_REMOVEDIR) == 0 {
            progress += 1
            return true
        }
        if errno == ENOENT { return true }
        // Not empty: deeper levels were moved up, and a later pass ends it.
        if errno != ENOTEMPTY { note(Errno(rawValue: errno)) }
        return false
    }

    /// Moves a too-deep directory to the top, under a name not yet used there.
    private mutating func moveUp(_ name: EntryName, in directory: Int32) -> Bool {
        for _ in 0..<1_000 {
            movedUp += 1
            // Never over an entry already at the top.
            if tether_renameat2(directory, name.cString, top, ".tether-removing-\(movedUp)", TETHER_RENAME_NOREPLACE) == 0 {
                progress += 1
                return false
            }
            if errno != EEXIST { break }
        }
        note(Errno(rawValue: errno))
        return false
    }

    private mutating func note(_ error: Errno) {
        if firstError == nil { firstError = error }
    }
}
