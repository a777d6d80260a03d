import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import TetherGroup
import TetherIPC

/// The features the host runs (named liveness locks it holds for whoever
/// asks) and who started each: one owner. It takes and releases the locks
/// and returns what changed; the host logs it and tells subscribers. Its
/// locks are real files, so it is tested without a host or a process.
/// Lives on the host's loop.
struct FeatureDesk {
    /// Features one extension may have started and running at once.
    static let perExtension = 16

    /// An extension that asks for a feature.
    struct Starter {
        let name: String
        /// With open access, what it starts outlives it (the user stops it).
        let openAccess: Bool
    }

    /// A feature that started or stopped.
    struct Change: Equatable {
        let name: String
        let running: Bool
        /// Why its lock file was replaced (a reader held it), to be warned of.
        var note: String?
    }

    private struct Owner {
        let name: String
        /// Started without open access: it ends when its starter does.
        let endsWithIt: Bool
    }

    private let group: GroupDirectory
    private let maximum: Int
    private var locks: [String: LivenessLock] = [:]
    /// The extension that started each feature it started: the only
    /// extension that may stop it.
    private var owners: [String: Owner] = [:]

    init(group: GroupDirectory, maximum: Int) {
        self.group = group
        self.maximum = maximum
    }

    /// A feature's name as the caller gave it, or its error.
    private static func name(_ target: NamedTarget) -> Result<FeatureName, RPCError> {
        do { return .success(try FeatureName(target.name)) } catch { return .failure(.invalidParams(error.description)) }
    }

    /// The features this host runs, by name.
    var running: [String] { locks.keys.sorted() }
    var count: Int { locks.count }

    /// `feature.start` by the user (nil) or by an extension: an extension
    /// runs at most `perExtension` it started, and one without open access
    /// only while it runs (`end(startedBy:)`).
    mutating func start(_ target: NamedTarget, by starter: Starter?) -> (Result<FeatureStarted, RPCError>, Change?) {
        if let starter, owners.values.count(where: { $0.name == starter.name }) >= Self.perExtension {
            return (.failure(.refused("'\(starter.name)' already runs \(Self.perExtension) features it started, its limit; stop one first")), nil)
        }
        let name: FeatureName
        switch Self.name(target) {
        case .success(let valid): name = valid
        case .failure(let error): return (.failure(error), nil)
        }
        // Every answer names the host's pid: this process's.
        let pid = Int64(getpid())
        if locks[name.rawValue] != nil {
            return (.success(FeatureStarted(name: name.rawValue, started: false, pid: pid)), nil)
        }
        guard locks.count < maximum else {
            return (.failure(.refused("the host already runs \(locks.count) features, its limit; stop one first")), nil)
        }
        do {
            let path = try group.preparedLockPath(for: .feature(name))
            guard let lock = try LivenessLock.tryAcquire(path: path, label: "feature \(name)") else {
                let holder = (try? LockProbe.status(ofLockAt: path))?.holder.map { " (pid \($0.pid))" } ?? ""
                return (.failure(.refused("feature '\(name)' is already running outside the host\(holder)")), nil)
            }
            locks[name.rawValue] = lock
            if let starter { owners[name.rawValue] = Owner(name: starter.name, endsWithIt: !starter.openAccess) }
            return (.success(FeatureStarted(name: name.rawValue, started: true, pid: pid)),
                    Change(name: name.rawValue, running: true, note: lock.displacementNote))
        } catch {
            // The group's state (a FIFO or a symlink planted where the lock
            // goes), not the host's fault: said as it is.
            return (.failure(.refused("cannot take feature '\(name)''s lock: \(error.description)")), nil)
        }
    }

    /// `feature.stop` by the user (nil) or by an extension, which stops
    /// only a feature it started.
    mutating func stop(_ target: NamedTarget, by stopper: String?) -> (Result<FeatureStopped, RPCError>, Change?) {
        if let stopper, owners[target.name]?.name != stopper {
            return (.failure(.refused("'\(stopper)' may stop only a feature it started; it did not start '\(target.name)'")), nil)
        }
        let name: FeatureName
        switch Self.name(target) {
        case .success(let valid): name = valid
        case .failure(let error): return (.failure(error), nil)
        }
        owners[name.rawValue] = nil
        guard let lock = locks.removeValue(forKey: name.rawValue) else {
            return (.failure(.refused("feature '\(name)' is not running in this host")), nil)
        }
        lock.release()
        return (.success(FeatureStopped(name: name.rawValue)), Change(name: name.rawValue, running: false))
    }

    /// What ends with extension `name`: the features it started without
    /// open access (nobody else may stop them), each to be stopped (and
    /// told) in turn.
    func ending(with name: String) -> [NamedTarget] {
        owners.filter { $0.value.name == name && $0.value.endsWithIt }.keys.sorted().map(NamedTarget.init(name:))
    }

    /// The host is stopping: every lock released at once, nobody told (its
    /// clients are told it stops).
    mutating func releaseAll() {
        for lock in locks.values { lock.release() }
        locks.removeAll()
        owners.removeAll()
    }

    /// Every feature whose lock is held, by this host or anyone else: the
    /// same answer `tether probe feature NAME` gives.
    func list() -> FeatureListing {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: GroupDirectory.featureLocksPath(of: group.path))) ?? []
        // A file whose name is no feature's is nobody's feature.
        let names = files.filter { $0.hasSuffix(".lock") }.compactMap { try? FeatureName(String($0.dropLast(5))) }
        var list: [FeatureListing.Running] = []
        for name in names.sorted(by: { $0.rawValue < $1.rawValue }) {
            guard let status = try? LockProbe.status(ofLockAt: group.lockPath(for: .feature(name))), status.running else { continue }
            list.append(FeatureListing.Running(name: name.rawValue, pid: status.holder.map { Int64($0.pid) },
                                               since: status.holder?.since, owner: locks[name.rawValue] != nil ? .host : .other))
        }
        return FeatureListing(list)
    }
}
