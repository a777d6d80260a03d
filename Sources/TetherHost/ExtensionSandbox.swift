#if canImport(Glibc)
import Glibc
#endif
import Logging
import SystemPackage
import TetherIPC
import TetherGroup
import TetherJSON
import TetherLoop
import TetherManifest
import TetherSandbox

/// The host's side of confinement: for each launch, its world
/// (`ExtensionWorld`) where the machine allows, else a private temporary
/// directory (`TMPDIR/tether-UID/G/NAME.XXXXXX`, its `TMPDIR`), and its
/// confinement by role (TetherSandbox), applied by the spawn's child just
/// before exec. Where the host was delegated a cgroup, each launch also
/// runs in a cgroup of its own (memory and task limits, one kill for the
/// whole tree). One per host: it says once which protections this kernel
/// lacks, and with `--require-sandbox` refuses to launch without them.
final class ExtensionSandbox {
    let required: Bool
    private let groupPath: String
    /// The host's own TMPDIR (or nil: /tmp), under which its extensions' go.
    private let temporaryBase: String?
    private let support: KernelSupport
    /// The host's delegated cgroup, if it has one.
    let cgroups: DelegatedCgroup?
    /// What `status` says of it.
    let cgroupsStatus: CgroupsStatus
    private let loop: EventLoop
    private let logger: Logger
    private var reported: Set<String> = []
    private var expectedReports: [(policy: SandboxPolicy, report: SandboxReport)] = []
    /// What launches' temporary directories hold (made at the first launch).
    private var diskUsage: DiskUsageWatcher?
    /// Ended launches' cgroups not yet empty, each with what to do once
    /// it is removed and the attempts left.
    private var retiring: [(ExtensionCgroup, then: (Bool) -> Void, attempts: Int)] = []
    private var retireTimer: LoopTimer?
    /// Rulesets built ahead of launches.
    private let spares: SpareRulesets
    /// Each extension's world, made at its first launch.
    private let worlds: WorldCache
    /// Temporary directories being removed, and who waits for the last.
    private var removals = 0
    private var removalWaiters: [() -> Void] = []

    init(group: String, required: Bool, temporaryBase: String?, cgroups: (DelegatedCgroup?, CgroupsStatus),
         support: KernelSupport = .current, loop: EventLoop, logger: Logger) {
        groupPath = group
        self.temporaryBase = temporaryBase
        self.required = required
        (self.cgroups, cgroupsStatus) = cgroups
        self.support = support
        self.loop = loop
        self.logger = logger
        spares = SpareRulesets(loop: loop, support: support)
        worlds = WorldCache(loop: loop)
        // Holding the host lock: extension cgroups here are a dead host's.
        for leftover in self.cgroups?.killLeftovers() ?? [] { retire(leftover) }
    }

    /// Tasks (processes and threads) one extension may have, where a cgroup counts them.
    static let tasksLimit = 512

    /// `BASE/tether-UID/HASH-OF-GROUP`, checked each time: no extension can
    /// write there (not even one with the group open to it).
    private func temporaryParent() throws(Errno) -> String {
        try PrivateTemporaryDirectory.hostParent(group: groupPath, base: temporaryBase)
    }

    /// Leftovers of a host that was killed before it could remove them: the
    /// caller holds the host lock, so no extension of this group uses them.
    /// Spares' directories too.
    func removeLeftovers(of manifests: [ExtensionManifest]) {
        guard let parent = try? temporaryParent() else { return }
        PrivateTemporaryDirectory.removeLeftovers(in: parent, prefixes: Set(manifests.map(\.name) + [SpareRulesets.prefix]))
    }

    /// At start: what hosts of groups that no longer exist left (no host
    /// will ever run there again to remove it).
    func removeOrphans() {
        PrivateTemporaryDirectory.removeOrphans(base: temporaryBase)
    }

    /// Counts what a launch's `temporary` directory holds; `onExceeded`
    /// (once, on the loop) past `limitMiB`. Nil, logged once, if the
    /// host cannot watch it (no inotify instance or watch left).
    func watchDisk(_ temporary: String, limitMiB: Int, onExceeded: @escaping () -> Void) -> DiskUsageWatcher.Tree? {
        do throws(Errno) {
            if diskUsage == nil { diskUsage = try DiskUsageWatcher(loop: loop) }
            return try diskUsage?.watch(temporary, limitBytes: Int64(limitMiB) << 20,
                                        maximumEntries: ExtensionWorld.entries(forDiskLimitMiB: limitMiB), onExceeded: onExceeded)
        } catch {
            if reported.insert("disk").inserted {
                logger.warning("""
                    cannot count what extensions write to their temporary directories (\(error)): \
                    only each file's size is limited
                    """)
            }
            return nil
        }
    }

    /// Counts one of the group's shared parts from now on, up to 64
    /// entries a MiB of twice `limitMiB` (nil, logged, where inotify
    /// cannot watch it).
    func watchGroupPart(_ path: String, limitMiB: Int, onCount: @escaping (Int64, Bool) -> Void) -> DiskUsageWatcher.Tree? {
        do throws(Errno) {
            if diskUsage == nil { diskUsage = try DiskUsageWatcher(loop: loop) }
            return try diskUsage?.watch(path, limitBytes: Int64(limitMiB) << 20,
                                        maximumEntries: ExtensionWorld.entries(forDiskLimitMiB: 2 * limitMiB), onCount: onCount)
        } catch {
            logger.warning("cannot count what the group's \(path) holds (\(error)): it is not bounded")
            return nil
        }
    }

    func unwatchDisk(_ tree: DiskUsageWatcher.Tree?) {
        if let tree { diskUsage?.unwatch(tree) }
    }

    /// At shutdown, after `removeLeftovers`: the spares, and the group's
    /// directory if empty, so a stopped host leaves nothing in the
    /// temporary directory.
    func removeParentIfEmpty() {
        spares.removeAll()
        worlds.removeConfiguration()
        PrivateTemporaryDirectory.removeHostParentIfEmpty(group: groupPath, base: temporaryBase)
    }

    func policy(for manifest: ExtensionManifest, temporaryDirectory: String?) -> SandboxPolicy {
        var policy = SandboxPolicy(role: manifest.role, openAccess: manifest.openAccess, group: groupPath,
                                   temporaryDirectory: temporaryDirectory, memoryLimitMiB: manifest.memoryLimitMiB)
        policy.fileSizeLimitMiB = manifest.diskLimitMiB
        policy.hiddenTemporaryRoots = PrivateTemporaryDirectory.roots(base: temporaryBase)
        // Where the host could make it (it opens the store before any launch).
        let secrets = GroupDirectory.secretsPath(of: groupPath)
        var info = stat()
        if lstat(secrets, &info) == 0, info.st_mode & S_IFMT == S_IFDIR { policy.secrets = secrets }
        if !policy.groupWritable { policy.otherSecrets = SecretsIndex.known().filter { $0 != secrets } }
        return policy
    }

    /// What would confine it, before it first runs. One report per distinct
    /// policy: a thousand manifests of one kind build one ruleset, not a
    /// thousand (each lists the temporary directory's parents).
    func expectedReport(for manifest: ExtensionManifest) -> SandboxReport {
        let policy = policy(for: manifest, temporaryDirectory: nil)
        if let known = expectedReports.first(where: { $0.policy == policy }) { return known.report }
        // As it will run: in its world where the machine gives worlds (no read grants to list).
        var report = Confinement(policy: policy, support: support, world: ExtensionWorld.unavailable == nil).report
        report.memoryByCgroup = cgroups?.controllers.contains("memory") == true
        expectedReports.append((policy, report))
        return report
    }

    /// Its own world, or nil where the machine refuses one (said once; under
    /// `--require-sandbox`, refused). Its policy (the secrets' index) is read only to make one.
    func world(for manifest: ExtensionManifest) throws(SandboxRefusal) -> SpawnWorld? {
        if let reason = ExtensionWorld.unavailable {
            if required { throw .missing(["its own world (\(reason))"]) }
            if reported.insert("world").inserted {
                logger.warning("extensions share this machine's file system, processes and network: user namespaces are refused (\(reason)); tether doctor says more")
            }
            return nil
        }
        do throws(Errno) {
            let made = try worlds.world(for: manifest, parent: temporaryParent(), support: support,
                                        policy: { policy(for: manifest, temporaryDirectory: nil) })
            if let error = worlds.configurationError, reported.insert("configuration").inserted {
                logger.warning("cannot copy what worlds show at /etc (\(error)): they show the last copies, or each file bound")
            }
            if let made { return made }
        } catch {
            throw .shortage(error)
        }
        // Its executable's directory holds what it may not see, or every
        // place for its TMPDIR holds what it must.
        try worldFailed(manifest, ("its root (its executable's directory would show the user's home or secrets, "
                                   + "or /tmp, /var/tmp and /run/tmp each hold what it must see)", .notPermitted))
        return nil
    }

    /// A launch whose world could not be made although the machine allows
    /// worlds: said, and (but under `--require-sandbox`) run without.
    func worldFailed(_ manifest: ExtensionManifest, _ failure: (step: String, error: Errno)) throws(SandboxRefusal) {
        worlds.forget(manifest.name)
        let reason = "cannot make the world of '\(manifest.name)' (\(failure.step): \(failure.error))"
        if required { throw .missing([reason]) }
        logger.warning("\(reason); it runs in the machine's")
    }

    /// A launch's temporary directory and confinement (`.refused` under
    /// `--require-sandbox` when a protection is missing). In a world of its
    /// own, its TMPDIR is the world's tmpfs, and its few rules need no spare.
    func prepare(_ manifest: ExtensionManifest, world: Bool) throws(SandboxRefusal)
        -> (Confinement, temporaryDirectory: String?) {
        var policy = policy(for: manifest, temporaryDirectory: nil)
        if world {
            let cgroup = makeCgroup(for: manifest)
            let confinement = Confinement(policy: policy, support: support, cgroup: cgroup, world: true)
            return (try checked(confinement, removing: nil), nil)
        }
        let spare = spares.take(for: policy)
        let parent: String, temporary: String
        do throws(Errno) {
            do throws(Errno) { parent = try temporaryParent() } catch {
                if let spare { SpareRulesets.discard(spare) }
                throw error
            }
            if let spare, let renamed = try? PrivateTemporaryDirectory.rename(spare.temporaryDirectory, in: parent,
                                                                               prefix: manifest.name) {
                temporary = renamed
            } else {
                if let spare { SpareRulesets.discard(spare) }
                temporary = try PrivateTemporaryDirectory.make(in: parent, prefix: manifest.name)
            }
        } catch {
            throw .noTemporaryDirectory(error)
        }
        policy.temporaryDirectory = temporary
        let cgroup = makeCgroup(for: manifest)
        let confinement = Confinement(policy: policy, support: support, cgroup: cgroup, prepared: spare?.ruleset)
        if confinement.shortage == nil && (confinement.missing.isEmpty || !required)
            // The next launch of its kind finds its rules ready; not right after
            // a spare went stale (a busy /tmp would have each launch build twice).
            && (spare == nil || confinement.usedPreparedRuleset) {
            spares.refill(policy, memoryByCgroup: cgroup?.memoryEnforced == true, in: parent)
        }
        return (try checked(confinement, removing: temporary), temporary)
    }

    /// `confinement`, unless it is short of rules or (under
    /// `--require-sandbox`) of a protection: then what was made for the
    /// launch goes (its cgroup, its `temporary` directory) and it is refused.
    private func checked(_ confinement: Confinement, removing temporary: String?) throws(SandboxRefusal) -> Confinement {
        // Nothing runs: what was made for it goes.
        func refused(_ refusal: SandboxRefusal) -> SandboxRefusal {
            if let temporary { try? PrivateTemporaryDirectory.remove(temporary) }
            if let cgroup = confinement.cgroup { retire(cgroup) }
            return refusal
        }
        if let shortage = confinement.shortage { throw refused(.shortage(shortage)) }
        if !confinement.missing.isEmpty {
            if required { throw refused(.missing(confinement.missing)) }
            let new = confinement.missing.filter { !reported.contains($0) }
            if !new.isEmpty {
                reported.formUnion(new)
                logger.warning("this kernel cannot confine extensions fully; running them without: \(new.joined(separator: "; ")) (tether host --require-sandbox refuses instead)")
            }
        }
        return confinement
    }

    /// The launch's cgroup, or nil (no delegation, or it could not be
    /// made: the launch goes without, its memory limited by RLIMIT_DATA).
    private func makeCgroup(for manifest: ExtensionManifest) -> ExtensionCgroup? {
        guard let cgroups else { return nil }
        do {
            return try cgroups.makeChild(name: manifest.name,
                                         memoryLimitBytes: manifest.memoryLimitMiB.map { $0 * 1_048_576 },
                                         tasksLimit: Self.tasksLimit)
        } catch {
            if reported.insert("cgroup").inserted {
                logger.warning("cannot make a cgroup for '\(manifest.name)' in \(cgroups.path) (\(error)); launching without one")
            }
            return nil
        }
    }

    /// An ended launch's cgroup: removed once the kernel has emptied it
    /// (after `cgroup.kill`, its processes die in a moment), then
    /// `then(true)`. Bounded: after about 2 s it is left for the next host's
    /// start, and `then(false)` runs.
    func retire(_ cgroup: ExtensionCgroup, then: @escaping (_ removed: Bool) -> Void = { _ in }) {
        if cgroup.remove() { return then(true) }
        retiring.append((cgroup, then, 100))
        armRetireTimer()
    }

    private func armRetireTimer() {
        let timer = retireTimer ?? LoopTimer(loop: loop)
        retireTimer = timer
        guard !timer.isActive, !retiring.isEmpty else { return }
        timer.start(afterMilliseconds: 20) { [unowned self] in
            var waiting: [(ExtensionCgroup, then: (Bool) -> Void, attempts: Int)] = []
            for (cgroup, then, attempts) in self.retiring {
                if cgroup.remove() {
                    then(true)
                } else if attempts <= 1 {
                    // Unkillable for now (uninterruptible sleep): its
                    // temporary directory stays too, for the next start.
                    cgroup.kill()
                    self.logger.warning("the cgroup \(cgroup.path) is not empty yet; the next host start removes it and the extension's temporary directory")
                    then(false)
                } else {
                    waiting.append((cgroup, then, attempts - 1))
                }
            }
            self.retiring = waiting
            self.armRetireTimer()
        }
    }

    /// At shutdown: every extension cgroup left (leftovers still in their
    /// grace) is killed now; empty ones are removed, the rest by the next host.
    func killLeftoverCgroups() {
        _ = cgroups?.killLeftovers()
        retireTimer?.close()
        retireTimer = nil
        for (_, then, _) in retiring { then(false) }  // removeLeftovers takes their TMPDIRs
        retiring.removeAll()
    }

    /// An ended launch's temporary directory, removed on a thread of its
    /// own (a tree of 100k files takes seconds; the loop keeps answering),
    /// within `removalSeconds`; what is left then is the next start's.
    /// `then` runs on the loop once it is done.
    func removeTemporaryDirectory(_ path: String, then: (() -> Void)? = nil) {
        removals += 1
        let deadline = MonotonicClock.seconds() + Self.removalSeconds
        nonisolated(unsafe) let sandbox = self  // touched on the loop only
        nonisolated(unsafe) let then = then  // run on the loop only
        let finished: @Sendable (Errno?) -> Void = { [loop] error in
            loop.execute {
                sandbox.removed(path, error: error)
                then?()
            }
        }
        do throws(Errno) {
            try DetachedThread.start {
                do throws(Errno) { try PrivateTemporaryDirectory.remove(path, deadline: deadline) } catch { return finished(error) }
                finished(nil)
            }
        } catch {
            // No thread to be had: here, then.
            do throws(Errno) { try PrivateTemporaryDirectory.remove(path, deadline: deadline) } catch { return finished(error) }
            finished(nil)
        }
    }

    private func removed(_ path: String, error: Errno?) {
        if let error { logger.warning("cannot remove the temporary directory \(path): \(error)") }
        removals -= 1
        guard removals == 0 else { return }
        let waiting = removalWaiters
        removalWaiters.removeAll()
        for then in waiting { then() }
    }

    /// Seconds one removal may take.
    static let removalSeconds = 30.0

    /// Runs `then` once no temporary directory is being removed.
    func afterRemovals(_ then: @escaping () -> Void) {
        if removals == 0 { return then() }
        removalWaiters.append(then)
    }
}
