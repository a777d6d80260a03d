#if os(Linux)
import Glibc
import Synchronization
import SystemPackage
import TetherJSON

/// A JSON object in one file of the group directory, shared by every
/// process: the defaults store and the credential store are two of these.
///
/// - Writers take the store's exclusive lock, read the current file, apply
///   their change and replace the file atomically (a renamed temporary file), so
///   concurrent writers never lose each other's updates and kill -9 at any
///   instant leaves the old or the new content.
/// - Readers take no lock. A cached read costs one `lstat`: the store keeps
///   the file it last read open, so that inode cannot be reused, and an
///   unchanged inode number therefore means unchanged content.
/// - A file that fails to parse is moved aside (under the lock) and reported
///   with `GroupError.corruptStore`; it is never silently overwritten.
public final class SharedStore: Sendable {
    /// A store's largest size, read or written: what the SDK parses within
    /// the smallest role's memory limit (a JSON value takes up to about
    /// twenty times its text's bytes once parsed: a 15 MiB store did not
    /// fit in 128 MiB). Larger files are moved aside like corrupt ones.
    package static let maximumSize = 1 << 20

    package let path: String
    package let lockPath: String
    /// The group's "full" mark (`GroupDirectory.fullMarkerPath`), for a
    /// store of the group's parts the host counts: while it is there, a
    /// write that grows the store is refused. Nil for the credentials
    /// (a refreshed token is always saved: a rotated one must not be lost).
    let fullMarker: String?

    private struct Cache {
        var fd: Int32 = -1
        var inode: ino_t = 0
        var device: dev_t = 0
        var values: [String: JSONValue] = [:]
    }
    private let cache = Mutex(Cache())

    package init(path: String, lockPath: String, fullMarker: String? = nil) {
        self.path = path
        self.lockPath = lockPath
        self.fullMarker = fullMarker
    }

    /// The defaults store: app settings every extension may read.
    public static func defaults(in group: GroupDirectory) throws(GroupError) -> SharedStore {
        SharedStore(path: try group.preparedStorePath("defaults"), lockPath: try group.preparedStoreLockPath("defaults"),
                    fullMarker: GroupDirectory.fullMarkerPath(of: group.path))
    }

    /// The credential store: token sets, readable by this user only.
    package static func credentials(in group: GroupDirectory) throws(GroupError) -> SharedStore {
        SharedStore(path: try group.preparedSecretsPath() + "/credentials.json",
                    lockPath: try group.preparedStoreLockPath("credentials"))
    }

    deinit {
        cache.withLock { if $0.fd >= 0 { Syscall.close($0.fd) } }
    }

    /// Keys are 1 to 256 printable characters.
    package static func validate(key: String) throws(GroupError) {
        guard !key.isEmpty, key.utf8.count <= 256, key.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7f })
        else { throw .invalidKey(key) }
    }

    // MARK: - Reading

    /// Every key and value, as of the last completed write.
    public func values() throws(GroupError) -> [String: JSONValue] {
        let info: stat
        do {
            info = try Syscall.lstat(path)
        } catch .noSuchFileOrDirectory {
            cache.withLock { Self.forget(&$0) }
            return [:]
        } catch {
            throw .system("read", path: path, error)
        }
        if let cached = cachedValues(for: info) { return cached }
        if case .values(let values) = try load() { return values }
        // A parse failure is looked at again under the lock before the file
        // is moved aside: a writer may have just replaced it.
        return try reportingCorruption { () throws(GroupError) in
            let lock = try ExclusiveLock.acquire(path: lockPath)
            defer { lock.release() }
            return try loadHoldingLock()
        }
    }

    /// Runs `body` (which takes and releases the lock), then tells the
    /// observer of a file moved aside: after the lock, so a slow log never
    /// holds other processes' writes.
    private func reportingCorruption<T>(_ body: () throws(GroupError) -> T) throws(GroupError) -> T {
        do {
            return try body()
        } catch {
            if case .corruptStore(let path, let keptAs, let reason) = error {
                CorruptionObserver.report(path: path, keptAs: keptAs, reason: reason)
            }
            throw error
        }
    }

    /// The values as far as they can be read right now, for observers that
    /// must never wait or change anything (the log redactor): no lock is
    /// taken, an unreadable file is not moved aside, any failure reads empty.
    package func valuesWithoutLocking() -> [String: JSONValue] {
        guard let info = try? Syscall.lstat(path) else { return [:] }
        if let cached = cachedValues(for: info) { return cached }
        guard case .values(let values)? = try? load() else { return [:] }
        return values
    }

    /// The values last read, if the file is still that inode (kept open, so
    /// the inode number cannot have been reused).
    private func cachedValues(for info: stat) -> [String: JSONValue]? {
        cache.withLock { $0.fd >= 0 && $0.inode == info.st_ino && $0.device == info.st_dev ? $0.values : nil }
    }

    /// The value for `key`, read as `values()` reads.
    public func value(forKey key: String) throws(GroupError) -> JSONValue? {
        try values()[key]
    }

    /// The keys whose values differ between two readings, sorted.
    package static func changedKeys(from old: [String: JSONValue], to new: [String: JSONValue]) -> [String] {
        Set(old.keys).union(new.keys).filter { old[$0] != new[$0] }.sorted()
    }

    // MARK: - Writing

    /// Applies `change` to the current values under the store's lock and
    /// replaces the file atomically when they changed. Returns what
    /// `change` returned. Concurrent callers in any process are serialized,
    /// so none loses another's update.
    @discardableResult
    /// Keys it adds are checked as `set` checks them.
    public func update<T>(_ change: (inout [String: JSONValue]) throws(GroupError) -> T) throws(GroupError) -> T {
        try reportingCorruption { () throws(GroupError) in try updateHoldingLock(change) }
    }

    private func updateHoldingLock<T>(_ change: (inout [String: JSONValue]) throws(GroupError) -> T) throws(GroupError) -> T {
        let lock = try ExclusiveLock.acquire(path: lockPath)
        defer { lock.release() }
        // Writers make temp files only while holding this lock, so any temp
        // file of this store found now is a dead writer's: it may hold a full
        // copy of the secrets, and goes before anything else happens.
        AtomicFile.removeTemporaryFiles(of: path)
        let before = try loadHoldingLock()
        var after = before
        let result = try change(&after)
        // Every value written can be read back: the file allows one level
        // more than a value, for the object that wraps them.
        for (key, value) in after where before[key] != value {
            if before[key] == nil { try Self.validate(key: key) }
            if !value.isNested(atMost: JSONCodec.maximumDepth) { throw .valueTooDeep(key, limit: JSONCodec.maximumDepth) }
        }
        if after != before {
            let bytes = JSONCodec.serialize(.object(after)) + [0x0a]
            // What is written can be read back, by the smallest role too.
            guard bytes.count <= Self.maximumSize else {
                throw .storeTooLarge(path, bytes: bytes.count, limit: Self.maximumSize)
            }
            // Over the group's size, only what shrinks the store is written.
            if let fullMarker, GroupDirectory.fullRefuses(bytes.count, over: path, marker: fullMarker) {
                throw .groupFull(GroupDirectory.group(ofFullMarker: fullMarker))
            }
            // Leftovers were swept above, under the lock.
            try AtomicFile.write(bytes, to: path, mode: 0o600, sweeping: .none)
        }
        return result
    }

    /// Sets `key` to `value` in one atomic replacement. A value nested
    /// deeper than 64 levels is refused and nothing is stored:
    /// every value stored can be read back.
    public func set(_ value: JSONValue, forKey key: String) throws(GroupError) {
        try Self.validate(key: key)
        try update { $0[key] = value }
    }

    /// Removes `key`; false if it had no value.
    @discardableResult
    public func removeValue(forKey key: String) throws(GroupError) -> Bool {
        try Self.validate(key: key)
        return try update { $0.removeValue(forKey: key) != nil }
    }

    // MARK: - Loading

    private enum Loaded {
        case values([String: JSONValue])
        case corrupt(reason: String)
    }

    /// Loads the file under the caller's lock; a corrupt file is moved aside.
    private func loadHoldingLock() throws(GroupError) -> [String: JSONValue] {
        switch try load() {
        case .values(let values):
            return values
        case .corrupt(let reason):
            let aside = "\(path).corrupt-\(time(nil))-\(getpid())"
            do {
                _ = try Syscall.check { rename(path, aside) }
            } catch {
                throw .system("move aside the unreadable", path: path, error)
            }
            cache.withLock { Self.forget(&$0) }
            throw .corruptStore(path, keptAs: aside, reason: reason)
        }
    }

    /// Reads the file into the cache. (`Syscall.open` adds O_CLOEXEC and
    /// O_NOFOLLOW: the kept descriptor never leaks into a child.)
    private func load() throws(GroupError) -> Loaded {
        // Read without the lock: a writer may rename a new file over the
        // one opened before it is looked at (`OwnedFile.opening` opens again).
        let path = self.path
        let opened = try OwnedFile.opening(path, doing: "read", private: true) { () throws(GroupError) -> Int32? in
            try OwnedFile.openForReading(path, doing: "read")
        }
        guard let (fd, info) = opened else {
            cache.withLock { Self.forget(&$0) }
            return .values([:])
        }
        guard Int(info.st_size) <= Self.maximumSize else {
            Syscall.close(fd)
            return .corrupt(reason: "it is \(info.st_size) bytes, over a store's limit of \(Self.maximumSize >> 20) MiB")
        }
        let bytes: [UInt8]
        do { bytes = try AtomicFile.read(fd: fd, path: path) } catch {
            Syscall.close(fd)
            throw error
        }
        let values: [String: JSONValue]
        do {
            // One level more than a value: the object that wraps the values.
            guard case .object(let object) = try JSONCodec.parse(bytes, maximumDepth: JSONCodec.maximumDepth + 1) else {
                Syscall.close(fd)
                return .corrupt(reason: "it holds JSON, but not an object")
            }
            values = object
        } catch {
            Syscall.close(fd)
            return .corrupt(reason: "it is not valid JSON: \(error)")
        }
        cache.withLock {
            Self.forget(&$0)
            $0 = Cache(fd: fd, inode: info.st_ino, device: info.st_dev, values: values)
        }
        return .values(values)
    }

    private static func forget(_ cache: inout Cache) {
        if cache.fd >= 0 { Syscall.close(cache.fd) }
        cache = Cache()
    }
}
#endif
