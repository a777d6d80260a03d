import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Logging
import TetherAuth
import TetherGroup
import TetherHTTP
import TetherIPC
import TetherLog
import TetherLoop
import TetherManifest
import TetherSandbox

/// The host: holds the host lock, serves JSON-RPC on the group's socket,
/// supervises extensions and runs features. Lives on its loop.
package final class Host: @unchecked Sendable {
    package struct Configuration: Sendable {
        package var group: GroupDirectory
        package var manifests: [ExtensionManifest]
        package var graceMilliseconds: UInt64
        package var logger: Logger
        /// Connections and queued replies on the socket.
        package var limits: RPCServer.Limits
        /// Features the host may run at once.
        package var maximumFeatures: Int
        /// Refuse to launch an extension this kernel cannot fully confine
        /// (it fails with exit 3; the others run). Off: run it with what
        /// the kernel has, and say once what is missing.
        package var requireSandbox: Bool
        /// The group's socket, bound and listening already: passed by a
        /// service manager (`SocketActivation`), which owns its file.
        package var listeningSocket: Int32?
        /// Show delivered pushes on the desktop when a notification server
        /// answers on the session bus (`--no-desktop-notifications`: off).
        package var desktopNotifications = true
        /// What the group's `shared/` and `stores/` may hold, in MiB: past
        /// it the group is marked full; past twice it, extensions that may
        /// write it are stopped (`Host+GroupSize`).
        package var groupLimitMiB = Configuration.defaultGroupLimitMiB

        package static let defaultMaximumFeatures = 256
        package static let defaultGroupLimitMiB = 256

        package init(group: GroupDirectory, manifests: [ExtensionManifest],
                     graceMilliseconds: UInt64 = 3_000, logger: Logger, limits: RPCServer.Limits = .init(),
                     maximumFeatures: Int = Configuration.defaultMaximumFeatures, requireSandbox: Bool = false) {
            self.group = group
            self.manifests = manifests
            self.graceMilliseconds = graceMilliseconds
            self.logger = logger
            self.limits = limits
            self.maximumFeatures = maximumFeatures
            self.requireSandbox = requireSandbox
        }
    }

    package let loop: EventLoop
    package let configuration: Configuration
    /// One supervisor per manifest: all, by name, and the kinds asked about often.
    var supervisors = SupervisorTable()
    /// The features it runs, and who started each.
    var features: FeatureDesk
    /// Extensions that said hello, by connection, with
    /// their indexes (by name, by hand, read-only keyboards, notifications).
    var attached = AttachmentRegistry()
    /// Their watchdogs, each period on one timer.
    let watchdogClock: WatchdogClock
    /// Connections that asked for each event (`host.subscribe`, a hello's
    /// `events`): the only ones told of it.
    var subscribers = SubscriberTable<RPCConnection>()
    /// What each widget shows, and who watches it (`Host+Widgets`).
    var widgets = WidgetBoard<RPCConnection>()
    /// The host's ends of launch links (`LaunchLink`), by connection: whose
    /// launch holds the other end.
    var links: [ObjectIdentifier: (name: String, connection: RPCConnection)] = [:]
    /// Connections found to be no extension's (`extensionPeer`): a process
    /// outside every launch's session and cgroup can never join one.
    var userPeers: Set<ObjectIdentifier> = []
    var linkKeys: [String: Set<ObjectIdentifier>] = [:]
    /// Work waiting for an extension's hello (a push, `extension.start`), by name.
    var helloWaiters: [String: [(id: Int, answer: (AttachedExtension?) -> Void)]] = [:]
    var nextWaiterID = 0
    /// Pushes in flight, from request to answer: what each sender holds,
    /// and what can still be ended (`PushDesk`).
    var pushes = PushDesk<PushDelivery>()
    /// Where the host is in its life: one state, not flags (as
    /// swift-service-lifecycle's `ServiceGroup` keeps its own).
    private var state = State.initial
    let metrics = HostMetrics()
    /// What the desktop is shown of delivered pushes (`DesktopBoard`).
    let desktop: DesktopBoard
    /// The handler of each request method (`Host+Routes`).
    lazy var router: HostRouter<RPCConnection> = makeRouter()
    /// What the group's shared parts hold, by part, as last counted.
    var groupSizes: [String: (bytes: Int64, crowded: Bool)] = [:]
    /// The keyboards as IBus engines, when the host has keyboards.
    var inputMethod: InputMethodBridge?

    private enum State {
        /// Made, not started (or its start failed).
        case initial
        /// Serving, since the loop's `since`, with what it holds.
        case running(since: UInt64, HostHoldings)
        /// `shutdown` began: nothing new is started, requests are still answered.
        case stopping(since: UInt64, HostHoldings)
        /// Down: the socket closed, the locks released.
        case stopped
    }

    /// `shutdown` has begun (or ended): nothing new is started.
    var isStopping: Bool {
        switch state {
        case .initial, .running: false
        case .stopping, .stopped: true
        }
    }

    /// Milliseconds since the host began serving (0 when it is not).
    var uptimeMilliseconds: UInt64 {
        switch state {
        case .running(let since, _), .stopping(let since, _): loop.now - since
        case .initial, .stopped: 0
        }
    }

    /// A host never started holds nothing: it is stopped at once, and its
    /// group (another host's, maybe) is not touched. False if it started.
    func stopUnstarted() -> Bool {
        guard case .initial = state else { return false }
        state = .stopped
        return true
    }

    /// The way down begins; false if it already has (or has nothing to
    /// go down from: `stopUnstarted` first).
    func beginStopping() -> Bool {
        switch state {
        case .running(let since, let held): state = .stopping(since: since, held)
        case .initial, .stopping, .stopped: return false
        }
        return true
    }

    /// The way down ended: what it held is gone with its state.
    func endStopping() { state = .stopped }

    /// What it holds while started: nil before its start and after its stop.
    var held: HostHoldings? {
        switch state {
        case .running(_, let held), .stopping(_, let held): held
        case .initial, .stopped: nil
        }
    }

    var server: RPCServer? { held?.server }
    var sandbox: ExtensionSandbox? { held?.sandbox }

    package init(loop: EventLoop, configuration: Configuration) {
        self.loop = loop
        watchdogClock = WatchdogClock(loop: loop)
        self.configuration = configuration
        features = FeatureDesk(group: configuration.group, maximum: configuration.maximumFeatures)
        desktop = DesktopBoard(loop: loop, logger: configuration.logger, enabled: configuration.desktopNotifications,
                               groupPath: configuration.group.path)
        desktop.onEvent = { [unowned self] event in self.publish(event.event, event.json) }
    }

    package var socketPath: String { configuration.group.socketPath }
    var logger: Logger { configuration.logger }
    /// Connections allowed after the descriptor reserve is set aside.
    package private(set) var effectiveLimits = RPCServer.Limits()
    /// Extensions that may run at once under the descriptor limit.
    var launchSlots = LaunchSlots(capacity: 0, softLimit: 0)
    package var pid: Int32 { getpid() }

    /// Takes the host lock, opens the socket and starts the extensions.
    package func start() throws(HostError) {
        // Once only: what a stopped host released is not taken up again.
        guard case .initial = state else { throw .startedBefore }
        let group = configuration.group
        // The loop's inotify instance before any lock: at a kill -9 the
        // kernel releases a process's files newest first, and an inotify
        // instance's release waits out an SRCU grace period (4–13 ms seen).
        // Opened after the locks, it would hold them past the moment the
        // host's sockets close; opened first, it goes last.
        let held = HostHoldings()
        held.inotifyAnchor = try? Inotify(loop: loop)
        // A failed start lets go of what it took (the locks with `held`).
        var started = false
        defer { if !started { held.inotifyAnchor?.close() } }
        // Before the host holds five descriptors an extension.
        ChildProcess.reserveSpawnDescriptors()
        // The group first: a host lock renamed away by an extension leaves
        // the group itself claimed.
        let outcome: GroupClaim.Outcome
        do {
            outcome = try GroupClaim.claim(group.path)
        } catch {
            throw .group(error)
        }
        switch outcome {
        case .claimed(let claim):
            held.groupClaim = claim
        case .claimedByHost(let pid):
            throw .alreadyRunning(pid: pid)
        case .readLocked(let pids):
            logger.warning("""
                the group directory is read-locked by pid \(pids.map(String.init).joined(separator: ", ")) \
                (not a host: a host locks it exclusively; an extension's child left by a killed host, say); \
                starting without that claim: only the host lock keeps a second host out
                """)
        }
        let lockPath: String
        let lock: LivenessLock?
        do {
            lockPath = try group.preparedLockPath(for: .host)
            lock = try LivenessLock.tryAcquire(path: lockPath, label: "host")
        } catch {
            throw .group(error)
        }
        guard let lock else {
            throw .alreadyRunning(pid: (try? LockProbe.status(ofLockAt: lockPath))?.holder?.pid)
        }
        held.hostLock = lock
        if let note = lock.displacementNote { logger.warning("\(note)") }
        // Holding the host lock, a socket left here is a dead host's (unless
        // a service manager listens there for us); anything else is not
        // ours to remove, and the bind below says what it is.
        var info = stat()
        if configuration.listeningSocket == nil, lstat(socketPath, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK {
            unlink(socketPath)
        }
        effectiveLimits = configuration.limits
        let softLimit = DescriptorLimit.raise()
        let worlds = ExtensionWorld.unavailable == nil
        ReadGrants.keepFew(worlds)
        let budget = DescriptorLimit.budget(connections: configuration.limits.maximumConnections, softLimit: softLimit,
                                            features: configuration.maximumFeatures, manifests: configuration.manifests.count,
                                            worlds: worlds)
        effectiveLimits.maximumConnections = budget.clients
        effectiveLimits.serverName = "the host"
        effectiveLimits.remedy = "start it with --max-connections to allow more"
        launchSlots = LaunchSlots(capacity: budget.runningExtensions, softLimit: softLimit)
        // Secrets the host could ever print (an extension echoing its token)
        // are redacted from its log, whatever the extension does.
        if let store = try? CredentialStore(group: group) {
            Redactor.shared.setProvider { store.secretsWithoutLocking() }
        }
        let logger = self.logger
        CorruptionObserver.set { logger.storeCorrupt(path: $0, keptAs: $1, reason: $2) }
        do {
            held.server = try RPCServer(loop: loop, path: socketPath, adopting: configuration.listeningSocket,
                                   limits: effectiveLimits, goodbye: HostNotification.disconnecting, handler: { [unowned self] connection, method, params, respond in
                self.handle(connection, method: method, params: params, respond: respond)
            }, onDisconnect: { [unowned self] connection in
                self.detach(connection)
            })
        } catch {
            lock.release()
            // Holding the lock, the host removed a socket a dead host left
            // there; whatever else is there stays.
            if error == .addressInUse, lstat(socketPath, &info) == 0, info.st_mode & S_IFMT != S_IFSOCK {
                throw .socketPathTaken(socketPath, isDirectory: info.st_mode & S_IFMT == S_IFDIR)
            }
            throw .socket(socketPath, error)
        }
        state = .running(since: loop.now, held)
        started = true
        desktop.start()
        startInputMethod()
        // Before the reaper: a process left in the delegated cgroup would
        // keep its controllers off.
        let cgroups = ExtensionSandbox.claimCgroups(group: group.path, logger: logger)
        let reaper = GroupReaper(graceMilliseconds: configuration.graceMilliseconds, logger: logger)
        held.reaper = reaper
        held.orphans = OrphanReaper(loop: loop)
        let environment = childEnvironment()
        let sandbox = ExtensionSandbox(group: group.path, required: configuration.requireSandbox,
                                       temporaryBase: ProcessEnvironment.value("TMPDIR"), cgroups: cgroups,
                                       loop: loop, logger: logger)
        // Holding the host lock: temporary directories here are a dead host's.
        sandbox.removeLeftovers(of: configuration.manifests)
        sandbox.removeOrphans()
        held.sandbox = sandbox
        // What extensions may write, made now: confined, they make nothing
        // at the group's top level (invariant 21).
        do throws(GroupError) {
            try group.prepareForExtensions()
        } catch {
            logger.warning("extensions will not be able to write the group: \(error)")
        }
        let resources = SupervisorResources(loop: loop, reaper: reaper, sandbox: sandbox, slots: launchSlots,
                                            graceMilliseconds: configuration.graceMilliseconds, metrics: metrics)
        for manifest in configuration.manifests {
            let lockPath: String
            do {
                lockPath = try group.preparedLockPath(for: .extensionInstance(FeatureName(manifest.name)))
            } catch {
                logger.error("extension '\(manifest.name)' cannot run: \(error)")
                continue
            }
            let supervisor = ExtensionSupervisor(
                manifest: manifest, resources: resources, lockPath: lockPath,
                environment: environment + [
                    "TETHER_EXTENSION=\(manifest.name)", "TETHER_ROLE=\(manifest.role.rawValue)",
                    "TETHER_OPEN_ACCESS=\(manifest.openAccess ? 1 : 0)",
                ],
                logger: logger)
            supervisors.add(supervisor)
            supervisor.onNotice = { [unowned self, unowned supervisor] notice in
                self.supervisor(supervisor, told: notice)
            }
        }
        // The extensions begin on the loop's next turn: whoever started the
        // host says it is ready first (its readiness line, READY=1), before
        // any extension's output; nothing can reach them before then.
        loop.execute { [self] in
            guard !self.isStopping else { return }
            for supervisor in self.supervisors.all { supervisor.begin() }
        }
        watchStores()
        watchGroupSize()
    }

    /// The group's stores, watched for widgets (`watchStores`).
    var defaultsWatcher: StoreWatcher?
    var credentialsWatcher: StoreWatcher?

    /// The host's broker, made on first use: it refreshes for every
    /// host-brokered extension, one refresh at a time like any process.
    var broker: TokenBroker?

    /// The host's environment for its children (`ChildEnvironment`); each
    /// launch's TMPDIR is added to it.
    func childEnvironment() -> [String] {
        ChildEnvironment.make(from: ProcessInfo.processInfo.environment, group: configuration.group.path, hostPID: pid)
    }

}
