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

/// The host: holds the host lock, serves JSON-RPC on the group's socket,
/// supervises extensions and runs features. Lives on its loop.
public final class Host: @unchecked Sendable {
    public struct Configuration: Sendable {
        public var group: GroupDirectory
        public var manifests: [ExtensionManifest]
        public var graceMilliseconds: UInt64
        public var logger: Logger
        /// Connections and queued replies on the socket.
        public var limits: RPCServer.Limits
        /// Features the host may run at once.
        public var maximumFeatures: Int
        /// Refuse to launch an extension this kernel cannot fully confine
        /// (it fails with exit 3; the others run). Off: run it with what
        /// the kernel has, and say once what is missing.
        public var requireSandbox: Bool

        public static let defaultMaximumFeatures = 256

        public init(group: GroupDirectory, manifests: [ExtensionManifest],
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

    public let loop: EventLoop
    public let configuration: Configuration
    private var hostLock: LivenessLock?
    private var server: RPCServer?
    private var supervisors: [ExtensionSupervisor] = []
    private var sandbox: ExtensionSandbox?
    private var features: [String: LivenessLock] = [:]
    /// Extensions that said hello, by connection.
    private var attached: [ObjectIdentifier: AttachedExtension] = [:]
    /// The host's ends of launch links (`LaunchLink`), by connection: whose
    /// launch holds the other end.
    private var links: [ObjectIdentifier: (name: String, connection: RPCConnection)] = [:]
    /// Work waiting for an extension's hello (a push, `extension.start`), by name.
    private var helloWaiters: [String: [(id: Int, answer: (AttachedExtension?) -> Void)]] = [:]
    private var nextWaiterID = 0
    private var startedAt: UInt64 = 0
    private var shuttingDown = false
    private var reaper: GroupReaper?
    private let metrics = HostMetrics()

    public init(loop: EventLoop, configuration: Configuration) {
        self.loop = loop
        self.configuration = configuration
    }

    public var socketPath: String { configuration.group.socketPath }
    private var logger: Logger { configuration.logger }
    /// Connections allowed after the descriptor reserve is set aside.
    public private(set) var effectiveLimits = RPCServer.Limits()
    public var pid: Int32 { getpid() }

    /// Takes the host lock, opens the socket and starts the extensions.
    public func start() throws(HostError) {
        let group = configuration.group
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
        hostLock = lock
        if let note = lock.displacementNote { logger.warning("\(note)") }
        // Holding the host lock, any socket file left here is a dead host's.
        unlink(socketPath)
        effectiveLimits = configuration.limits
        effectiveLimits.maximumConnections = DescriptorLimit.connectionCeiling(
            configuration.limits.maximumConnections, softLimit: DescriptorLimit.raise(),
            features: configuration.maximumFeatures, extensions: configuration.manifests.count)
        // Secrets the host could ever print (an extension echoing its token)
        // are redacted from its log, whatever the extension does.
        if let store = try? CredentialStore(group: group) {
            Redactor.shared.setProvider { store.secretsWithoutLocking() }
        }
        let logger = self.logger
        CorruptionObserver.set { logger.storeCorrupt(path: $0, keptAs: $1, reason: $2) }
        do {
            server = try RPCServer(loop: loop, path: socketPath, limits: effectiveLimits, handler: { [unowned self] connection, method, params, respond in
                self.handle(connection, method: method, params: params, respond: respond)
            }, onDisconnect: { [unowned self] connection in
                self.detach(connection)
            })
        } catch {
            hostLock?.release()
            hostLock = nil
            throw .socket(socketPath, error)
        }
        startedAt = loop.now
        // Before the reaper: a process left in the delegated cgroup would
        // keep its controllers off.
        let cgroups = ExtensionSandbox.claimCgroups(group: group.path, logger: logger)
        let reaper = GroupReaper(graceMilliseconds: configuration.graceMilliseconds, logger: logger)
        self.reaper = reaper
        let environment = childEnvironment()
        let sandbox = ExtensionSandbox(group: group.path, required: configuration.requireSandbox,
                                       temporaryBase: ProcessEnvironment.value("TMPDIR"), cgroups: cgroups,
                                       loop: loop, logger: logger)
        // Holding the host lock: temporary directories here are a dead host's.
        sandbox.removeLeftovers(of: configuration.manifests)
        sandbox.removeOrphans()
        self.sandbox = sandbox
        for manifest in configuration.manifests {
            let lockPath: String
            do {
                lockPath = try group.preparedLockPath(for: .extensionInstance(FeatureName(manifest.name)))
            } catch {
                logger.error("extension '\(manifest.name)' cannot run: \(error)")
                continue
            }
            let supervisor = ExtensionSupervisor(
                manifest: manifest, loop: loop, lockPath: lockPath,
                environment: environment + [
                    "TETHER_EXTENSION=\(manifest.name)", "TETHER_ROLE=\(manifest.role.rawValue)",
                    "TETHER_OPEN_ACCESS=\(manifest.openAccess ? 1 : 0)",
                ],
                reaper: reaper, sandbox: sandbox, graceMilliseconds: configuration.graceMilliseconds, logger: logger,
                metrics: metrics)
            supervisors.append(supervisor)
            supervisor.onWillTerminate = { [unowned self, unowned supervisor] in
                // Version 1 knows no such notice; SIGTERM tells it.
                guard let entry = self.attachedEntry(named: supervisor.manifest.name), entry.protocolVersion >= 2 else { return }
                entry.connection.notify(HostNotification.willTerminate, ["reason": "idle"])
            }
            supervisor.hasWaiters = { [unowned self, unowned supervisor] in
                self.helloWaiters[supervisor.manifest.name]?.isEmpty == false
            }
            supervisor.onGone = { [unowned self, unowned supervisor] relaunching in
                // What is left of that launch speaks no more.
                self.closeLinks(of: supervisor.manifest.name)
                if !relaunching { self.answerHelloWaiters(supervisor.manifest.name, with: nil) }
            }
            supervisor.onLink = { [unowned self, unowned supervisor] descriptor, pid in
                self.adoptLink(descriptor, pid: pid, of: supervisor.manifest.name)
            }
        }
        // The extensions begin on the loop's next turn: whoever started the
        // host says it is ready first (its readiness line, READY=1), before
        // any extension's output; nothing can reach them before then.
        loop.execute { [self] in
            guard !self.shuttingDown else { return }
            for supervisor in self.supervisors { supervisor.begin() }
        }
        watchDefaultsForIdleWidgets()
    }

    /// A defaults change launches idle on-demand widgets (they show what
    /// changed); running ones hear of it by their own watcher.
    private var defaultsWatcher: StoreWatcher?

    private func watchDefaultsForIdleWidgets() {
        guard supervisors.contains(where: { $0.manifest.role == .widget && $0.isOnDemand }) else { return }
        do {
            let path = configuration.group.storePath("defaults")
            defaultsWatcher = try StoreWatcher(loop: loop, paths: [path]) { [unowned self] _ in
                _ = self.launchIdleWidgets(named: nil)
            }
        } catch {
            logger.warning("cannot watch the shared defaults (on-demand widgets will not launch on a change): \(error)")
        }
    }

    /// The host's environment for its children: the group and socket, never a secret.
    private func childEnvironment() -> [String] {
        var environment = ProcessInfo.processInfo.environment
        // TMPDIR: each launch gets its own. The addresses of the session's
        // Unix-socket services are not passed on: a confined extension
        // should not be pointed at a door out (the README's sandbox limits).
        let withheld: Set = ["NOTIFY_SOCKET", "TMPDIR", "DBUS_SESSION_BUS_ADDRESS", "SSH_AUTH_SOCK", "DISPLAY",
                             "WAYLAND_DISPLAY", "XDG_RUNTIME_DIR"]
        for key in environment.keys where key.hasPrefix("TETHER_") || withheld.contains(key) {
            environment.removeValue(forKey: key)
        }
        environment["TETHER_GROUP"] = configuration.group.path
        // Not the socket's path: a launch speaks through its link.
        environment[LaunchLink.variable] = String(LaunchLink.descriptor)
        environment["TETHER_HOST_PID"] = String(pid)
        return environment.map { "\($0.key)=\($0.value)" }.sorted()
    }

    /// Stops features, tells clients, stops every extension (SIGTERM, then
    /// SIGKILL after the grace period), closes the socket, drops the lock.
    public func shutdown(_ completion: @escaping () -> Void) {
        guard !shuttingDown else { return }
        shuttingDown = true
        logger.event(.hostStopping, level: .notice, "tether host stopping",
                     ["extensions": .number(supervisors.count), "features": .number(features.count)])
        defaultsWatcher?.close()
        defaultsWatcher = nil
        for (_, lock) in features { lock.release() }
        features.removeAll()
        server?.broadcast(HostNotification.stopping)
        var remaining = supervisors.count
        let release = { [unowned self] in
            // Leftovers still in their grace: their cgroups are killed, and
            // their temporary directories removed while the lock keeps a
            // next host from making new ones.
            self.sandbox?.killLeftoverCgroups()
            self.sandbox?.removeLeftovers(of: self.configuration.manifests)
            self.sandbox?.removeParentIfEmpty()
            self.hostLock?.release()
            self.hostLock = nil
            // Groups still listed (leftovers within their grace) are the
            // reaper's to end now.
            self.reaper?.close()
            self.reaper = nil
            completion()
        }
        let finish = { [unowned self] in
            self.server?.close()
            self.server = nil
            // Temporary directories still being removed end first.
            guard let sandbox = self.sandbox else { return release() }
            sandbox.afterRemovals(release)
        }
        guard remaining > 0 else { return finish() }
        for supervisor in supervisors {
            supervisor.stop {
                remaining -= 1
                if remaining == 0 { finish() }
            }
        }
    }

    // MARK: - Requests

    /// The host's broker, made on first use: it refreshes for every
    /// host-brokered extension, one refresh at a time like any process.
    private var broker: TokenBroker?

    private func token(_ params: JSONValue?, respond: @escaping RPCConnection.Respond) {
        let kind = params?["kind"]?.stringValue.flatMap(TokenKind.init(rawValue:))
        let rejected = params?["rejected"]?.stringValue
        if broker == nil {
            let logger = self.logger
            do {
                // Its requests run on the host's own loop.
                broker = try TokenBroker(group: configuration.group, http: HTTPClient(loop: loop), logger: logger,
                                         onWarning: { logger.warning("\($0)") })
            } catch {
                return respond(.failure(.internalError(error.description)))
            }
        }
        guard let broker else { return }
        let loop = self.loop
        nonisolated(unsafe) let respond = respond  // called on the loop only
        Task(executorPreference: loop.taskExecutor) {
            let result: Result<JSONValue, RPCError>
            do throws(AuthError) {
                // `rejected`: a server refused that token early; one coordinated refresh.
                let set = try await broker.tokenSet(kind, rejecting: rejected)
                var answer: [String: JSONValue] = ["accessToken": .string(set.accessToken)]
                if let expiry = set.expiry { answer["expiresAt"] = .number(expiry) }
                result = .success(.object(answer))
            } catch {
                result = .failure(.refused(error.description))
            }
            loop.execute { respond(result) }
        }
    }

    private func handle(_ connection: RPCConnection, method: String, params: JSONValue?,
                        respond answer: @escaping RPCConnection.Respond) {
        // Every request is counted by method, and by error code if it fails.
        let respond: RPCConnection.Respond = { [metrics] result in
            if case .failure(let error) = result { metrics.request(method, error: error.code) } else { metrics.request(method, error: nil) }
            answer(result)
        }
        // An on-demand extension that asks for something is not idle.
        if let peer = attached[ObjectIdentifier(connection)], peer.managed {
            supervisor(named: peer.name)?.noteActivity()
        }
        switch method {
        case HostMethod.ping:
            respond(.success(["pid": .integer(pid)]))
        case HostMethod.status:
            respond(.success(status()))
        case HostMethod.featureStart:
            respond(featureName(params).flatMap(startFeature))
        case HostMethod.featureStop:
            if let name = readOnlyPeer(connection) {
                return respond(.failure(.refused("'\(name)' has read-only access to the group "
                                                 + "(set \"openAccess\": true in its manifest)")))
            }
            respond(featureName(params).flatMap(stopFeature))
        case HostMethod.featureList:
            respond(.success(featureList()))
        case HostMethod.hello:
            respond(hello(connection, params))
        case HostMethod.push:
            push(params, respond: respond)
        case HostMethod.reload:
            respond(reload(params))
        case HostMethod.tokenGet:
            token(params, respond: respond)
        case HostMethod.defaultsChanged:
            let keys = params?["keys"] ?? .array([])
            var notified = 0
            for peer in attached.values where peer.connection !== connection {
                peer.connection.notify(HostNotification.defaultsChanged, ["keys": keys])
                supervisor(named: peer.name)?.noteActivity()
                notified += 1
            }
            // An idle on-demand widget shows the new defaults: launch it.
            let launched = launchIdleWidgets(named: nil)
            respond(.success(["notified": .integer(notified), "launched": .array(launched.map { .string($0) })]))
        case HostMethod.extensionStart:
            startExtension(params, respond: respond)
        case HostMethod.extensionStop:
            if let name = readOnlyPeer(connection) {
                return respond(.failure(.refused("'\(name)' has read-only access to the group "
                                                 + "(set \"openAccess\": true in its manifest)")))
            }
            stopExtension(params, respond: respond)
        case HostMethod.extensionList:
            respond(.success(.array(extensionList())))
        case HostMethod.metrics:
            respond(.success(["contentType": "text/plain; version=0.0.4", "text": .string(metricsText())]))
        default:
            respond(.failure(.methodNotFound(method)))
        }
    }

    // MARK: - Extensions on the socket

    /// The read-only keyboard behind `connection`, if it is one: by its
    /// hello (where its manifest, not its claim, says whether it has open
    /// access), or, on a connection that never said hello, by the process at
    /// the other end: one of a read-only keyboard the host launched (its
    /// process group) or one attached by hand.
    private func readOnlyPeer(_ connection: RPCConnection) -> String? {
        // The process first, whatever the connection said: a second
        // connection's hello under another name changes nothing.
        if let pid = connection.peer?.pid {
            if let supervisor = supervisors.first(where: {
                $0.manifest.role == .keyboard && !$0.manifest.openAccess && $0.owns(pid: pid)
            }) {
                return supervisor.manifest.name
            }
            if let entry = attached.values.first(where: { $0.role == .keyboard && !$0.openAccess && $0.pid == pid }) {
                return entry.name
            }
        }
        guard let entry = attached[ObjectIdentifier(connection)] else { return nil }
        return entry.role == .keyboard && !entry.openAccess ? entry.name : nil
    }

    private func hello(_ connection: RPCConnection, _ params: JSONValue?) -> Result<JSONValue, RPCError> {
        // A hello without a version is version 1: shell and Python
        // extensions written before versions keep working.
        var version = 1
        if let requested = params?["protocol"], requested != .null {
            guard let number = requested.intValue else {
                return .failure(.invalidParams("\"protocol\" must be an integer"))
            }
            guard HostProtocol.supported.contains(number) else {
                return .failure(.unsupportedProtocol(requested, supported: HostProtocol.supported))
            }
            version = number
        }
        guard let name = params?["name"]?.stringValue, FeatureName.isValid(name) else {
            return .failure(.invalidParams("\"name\" must be an extension name"))
        }
        guard let roleText = params?["role"]?.stringValue, let role = ExtensionRole(rawValue: roleText) else {
            return .failure(.invalidParams("\"role\" must be widget, keyboard or notification"))
        }
        guard let peer = connection.peer else { return .failure(.internalError("peer credentials unavailable")) }
        let key = ObjectIdentifier(connection)
        if let existing = attached[key] {
            return .failure(.refused("this connection already said hello, as '\(existing.name)'"))
        }
        if let refusal = linkRefusal(connection, name: name, pid: peer.pid) { return .failure(refusal) }
        if let other = attached.first(where: { $0.key != key && $0.value.name == name })?.value {
            // Its launch's link outranks whatever took the name on the socket.
            guard links[key] != nil, links[ObjectIdentifier(other.connection)] == nil else {
                return .failure(.refused("extension '\(name)' is already attached (pid \(other.pid))"))
            }
            logger.warning("pid \(other.pid) was attached as '\(name)', which this host launched; disconnected")
            detach(other.connection)
            other.connection.close()
        }
        let supervisor = supervisors.first { $0.manifest.name == name }
        // Open access comes from the host's manifest where it has one: a
        // claim beyond it is refused, not quietly narrowed.
        if let manifest = supervisor?.manifest, params?["openAccess"]?.boolValue == true, !manifest.openAccess {
            logger.warning("pid \(peer.pid) said hello as '\(name)' claiming open access, which its manifest does not grant; refused")
            return .failure(.refused("extension '\(name)' has no open access in the host's manifest"))
        }
        // Its launch's link: whichever of its processes speaks on it.
        let managed = links[key] != nil
        let budget = params?["timeBudgetMilliseconds"]?.intValue.flatMap { $0 > 0 ? UInt64($0) : nil }
        var entry = AttachedExtension(
            name: name, role: supervisor?.manifest.role ?? role, pid: peer.pid, managed: managed,
            openAccess: supervisor?.manifest.openAccess ?? params?["openAccess"]?.boolValue ?? false,
            timeBudgetMilliseconds: budget, protocolVersion: version, connection: connection)
        // Only protocol 2 answers pings; version 1 would never be seen alive.
        let period = supervisor?.manifest.watchdogMilliseconds ?? ExtensionManifest.defaultWatchdogMilliseconds
        if version >= 2, period > 0 {
            entry.watchdog = Watchdog(loop: loop, connection: connection, periodMilliseconds: period) { [unowned self] in
                self.unresponsive(connection, period: period)
            }
        } else if period > 0, supervisor != nil {
            logger.warning("""
                extension '\(name)' speaks protocol 1, which cannot answer pings: its watchdog is not enforced \
                (speak protocol 2, or set "watchdog": 0 in its manifest)
                """)
        }
        attached[key] = entry
        // An extension's connection is never evicted to make room for others.
        connection.isPinned = true
        metrics.extensionAttached(metricLabel(name), managed: managed)
        logger.event(.extensionAttached, "extension '\(name)' attached (pid \(peer.pid)\(managed ? "" : ", started by hand"))",
                     ["extension": .string(name), "pid": .number(peer.pid), "role": .string(entry.role.rawValue),
                      "managed": .bool(managed),
                      "protocol": .number(version)])
        server?.broadcast(HostNotification.extensionChanged, entry.json.merging(["attached": true]))
        if managed { supervisor?.noteActivity() }
        answerHelloWaiters(name, with: entry)
        return .success(["hostPid": .integer(pid), "group": .string(configuration.group.path),
                         "managed": .bool(managed), "openAccess": .bool(entry.openAccess),
                         "protocol": .integer(version),
                         "capabilities": .array(HostProtocol.capabilities.map { .string($0) }),
                         "host": ["pid": .integer(pid), "version": .string(HostProtocol.release)]])
    }

    /// Why a hello as `name` is refused on `connection`, if it is: a link
    /// speaks only as its launch; the socket never for a launch (its
    /// processes have their link) nor as an extension this host is running.
    private func linkRefusal(_ connection: RPCConnection, name: String, pid: Int32) -> RPCError? {
        if let link = links[ObjectIdentifier(connection)]?.name {
            guard link != name else { return nil }
            logger.warning("extension '\(link)' said hello as '\(name)' over its link; refused")
            return .refused("this link is extension '\(link)''s; it cannot say hello as '\(name)'")
        }
        if let owner = supervisors.first(where: { $0.owns(pid: pid) }) {
            logger.warning("pid \(pid), a process of extension '\(owner.manifest.name)', said hello as '\(name)' on the socket; refused")
            return .refused("a process of extension '\(owner.manifest.name)' speaks only through the link the host handed it")
        }
        if let launched = supervisor(named: name), launched.isLaunched {
            let running = launched.pid.map { " (pid \($0))" } ?? ""
            logger.warning("pid \(pid) said hello as '\(name)', which this host runs\(running); refused")
            return .refused("extension '\(name)' is running\(running), launched by this host")
        }
        return nil
    }

    private func adoptLink(_ descriptor: Int32, pid: Int32, of name: String) {
        closeLinks(of: name)
        guard let server else { return _ = close(descriptor) }
        do {
            let connection = try server.adopt(descriptor: descriptor, peer: PeerCredentials(pid: pid, uid: geteuid(), gid: getegid()))
            links[ObjectIdentifier(connection)] = (name, connection)
        } catch {
            logger.warning("extension '\(name)' cannot reach the host: its link failed (\(error))")
        }
    }

    private func closeLinks(of name: String) {
        for (_, link) in links where link.name == name { link.connection.close() }
    }

    /// A ping went unanswered for a whole period. The host's own child is
    /// killed (SIGKILL to its group) and handled by its restart policy; one
    /// started by hand is not the host's to kill: it is disconnected.
    private func unresponsive(_ connection: RPCConnection, period: UInt64) {
        guard let entry = attached[ObjectIdentifier(connection)] else { return }
        let seconds = period % 1000 == 0 ? "\(period / 1000)" : "\(Double(period) / 1000)"
        metrics.extensionUnresponsive(metricLabel(entry.name))
        let metadata: Logger.Metadata = ["extension": .string(entry.name), "pid": .number(entry.pid), "periodMs": .number(period),
                                         "managed": .bool(entry.managed)]
        if entry.managed, let supervisor = supervisor(named: entry.name) {
            logger.event(.extensionUnresponsive, level: .error,
                         "extension '\(entry.name)' is unresponsive (no answer to a ping in \(seconds) s); killing it",
                         metadata)
            supervisor.killUnresponsive()
        } else {
            let what = "extension '\(entry.name)' (pid \(entry.pid), started by hand) is unresponsive"
            logger.event(.extensionUnresponsive, level: .error,
                         "\(what) (no answer to a ping in \(seconds) s); disconnecting it", metadata)
            connection.close()
        }
    }

    /// An extension's name as a metric label: its own for the host's
    /// manifests, "by-hand" for any other, so a peer saying hello under
    /// ever new names cannot grow the host's series.
    private func metricLabel(_ name: String) -> String {
        supervisor(named: name) != nil ? name : "by-hand"
    }

    private func supervisor(named name: String) -> ExtensionSupervisor? {
        supervisors.first { $0.manifest.name == name }
    }

    private func attachedEntry(named name: String) -> AttachedExtension? {
        attached.values.first { $0.name == name }
    }

    /// Calls `answer` with the extension once it has said hello (at once if
    /// it has), or nil if it goes without; the result cancels the wait.
    private func whenAttached(_ name: String, _ answer: @escaping (AttachedExtension?) -> Void) -> () -> Void {
        if let entry = attachedEntry(named: name), isUsable(entry) {
            answer(entry)
            return {}
        }
        nextWaiterID += 1
        let id = nextWaiterID
        helloWaiters[name, default: []].append((id, answer))
        return { [weak self] in self?.helloWaiters[name]?.removeAll { $0.id == id } }
    }

    /// Not on its way out: an instance being ended takes no new work (the
    /// work waits for the next one).
    private func isUsable(_ entry: AttachedExtension) -> Bool {
        !(entry.managed && supervisor(named: entry.name)?.isEnding == true)
    }

    private func answerHelloWaiters(_ name: String, with entry: AttachedExtension?) {
        guard let waiters = helloWaiters.removeValue(forKey: name) else { return }
        for waiter in waiters { waiter.answer(entry) }
    }

    /// `extension.start {name}`: launch it if it is not running and wait
    /// for its hello (at most `startWait`); `{name, state, pid, attached}`.
    private func startExtension(_ params: JSONValue?, respond: @escaping RPCConnection.Respond) {
        guard let name = params?["name"]?.stringValue else { return respond(.failure(.invalidParams("\"name\" is required"))) }
        guard let supervisor = supervisor(named: name) else {
            return respond(.failure(.refused("no extension named '\(name)' in this host's manifests")))
        }
        guard !shuttingDown, supervisor.demand(explicitly: true) else {
            return respond(.failure(.refused("extension '\(name)' cannot start: it is \(supervisor.state.rawValue)")))
        }
        let timer = LoopTimer(loop: loop)
        var answered = false
        let answer: (AttachedExtension?) -> Void = { entry in
            guard !answered else { return }
            answered = true
            timer.close()
            var result = supervisor.statusJSON.merging(["attached": .bool(entry != nil)])
            if let entry { result = result.merging(["pid": .integer(entry.pid)]) }
            if entry == nil, supervisor.state == .failed {
                return respond(.failure(.refused("extension '\(name)' failed to start; see the host's log")))
            }
            respond(.success(result))
        }
        let cancel = whenAttached(name, answer)
        guard !answered else { return }
        timer.start(afterMilliseconds: Self.startWaitMilliseconds) {
            cancel()
            answer(nil)
        }
    }

    /// How long `extension.start` waits for the hello before answering
    /// `attached: false` (a shell extension may never say one).
    static let startWaitMilliseconds: UInt64 = 10_000

    /// `extension.stop {name}`: SIGTERM to its group, SIGKILL after the
    /// grace; answered once it is gone. An on-demand one rests idle after.
    private func stopExtension(_ params: JSONValue?, respond: @escaping RPCConnection.Respond) {
        guard let name = params?["name"]?.stringValue else { return respond(.failure(.invalidParams("\"name\" is required"))) }
        guard let supervisor = supervisor(named: name) else {
            let byHand = attachedEntry(named: name).map { " (pid \($0.pid) was started by hand; stop it there)" } ?? ""
            return respond(.failure(.refused("no extension named '\(name)' in this host's manifests\(byHand)")))
        }
        guard !shuttingDown else { return respond(.failure(.refused("the host is stopping every extension"))) }
        let wasRunning = supervisor.hasProcess
        supervisor.stop {
            respond(.success(["name": .string(name), "stopped": .bool(wasRunning),
                              "state": .string(supervisor.state.rawValue)]))
        }
    }

    /// Launches idle on-demand widgets (all, or the one named); their names.
    private func launchIdleWidgets(named name: String?) -> [String] {
        var launched: [String] = []
        guard !shuttingDown else { return [] }
        for supervisor in supervisors where supervisor.manifest.role == .widget && supervisor.isOnDemand
            && (supervisor.state == .idle || supervisor.isEnding) && (name == nil || supervisor.manifest.name == name) {
            if supervisor.demand() { launched.append(supervisor.manifest.name) }
        }
        return launched
    }

    private func detach(_ connection: RPCConnection) {
        links.removeValue(forKey: ObjectIdentifier(connection))
        guard let entry = attached.removeValue(forKey: ObjectIdentifier(connection)) else { return }
        entry.watchdog?.stop()
        if !shuttingDown { logger.info("extension '\(entry.name)' detached") }
        server?.broadcast(HostNotification.extensionChanged, entry.json.merging(["attached": false]))
    }

    private func push(_ params: JSONValue?, respond: @escaping RPCConnection.Respond) {
        guard let payload = params?["payload"], case .object = payload else {
            return respond(.failure(.invalidParams("\"payload\" must be a JSON object")))
        }
        var budget: UInt64?
        if let value = params?["budgetMilliseconds"] {
            guard let milliseconds = value.intValue, milliseconds > 0 else {
                return respond(.failure(.invalidParams("\"budgetMilliseconds\" must be a positive integer")))
            }
            budget = UInt64(milliseconds)
        }
        // The attached notification extensions, and the on-demand ones,
        // launched for this push.
        var names = Set(attached.values.filter { $0.role == .notification && isUsable($0) }.map(\.name))
        if !shuttingDown {
            for supervisor in supervisors where supervisor.manifest.role == .notification && supervisor.isOnDemand
                && !names.contains(supervisor.manifest.name) && supervisor.demand() {
                names.insert(supervisor.manifest.name)
            }
        }
        let routes = names.sorted().map { name in
            // The push counts as work for its idle clock from hand-over to answer.
            var working: ExtensionSupervisor?
            return PushDelivery.Route(name: name, ready: { [unowned self] handOver in
                self.whenAttached(name) { entry in
                    if let entry, entry.managed, let supervisor = self.supervisor(named: name) {
                        working = supervisor
                        supervisor.noteWork(began: true)
                    }
                    handOver(entry)
                }
            }, settled: {
                working?.noteWork(began: false)
                working = nil
            })
        }
        let logger = self.logger
        PushDelivery.start(loop: loop, payload: payload, budgetMilliseconds: budget, routes: routes,
                           report: { [unowned self] name, outcome, milliseconds, modified in
            self.metrics.push(self.metricLabel(name), outcome: outcome.rawValue, milliseconds: milliseconds)
            let metadata: Logger.Metadata = ["extension": .string(name), "outcome": .string(outcome.rawValue),
                                             "durationMs": .number(milliseconds), "modified": .bool(modified)]
            if outcome == .timedOut {
                logger.event(.pushTimedOut, level: .warning,
                             "push: '\(name)' ran out of its time budget (\(milliseconds) ms); the original content was delivered",
                             metadata)
            } else {
                logger.event(.pushDelivered, "push: delivered through '\(name)' in \(milliseconds) ms"
                             + (outcome == .failed ? " (it could not take it; the original content)" : ""), metadata)
            }
        }, respond: respond)
    }

    private func reload(_ params: JSONValue?) -> Result<JSONValue, RPCError> {
        let name = params?["name"]?.stringValue
        let widgets = attached.values.filter { $0.role == .widget && isUsable($0) && (name == nil || $0.name == name) }
        // An idle on-demand widget is launched: its first timeline is the reload.
        let launched = shuttingDown ? [] : launchIdleWidgets(named: name)
        if let name, widgets.isEmpty, launched.isEmpty {
            return .failure(.refused("no widget named '\(name)' is attached"))
        }
        for widget in widgets {
            widget.connection.notify(HostNotification.reload, ["reason": "host"])
            if widget.managed { supervisor(named: widget.name)?.noteActivity() }
        }
        return .success(["reloaded": .array((widgets.map(\.name) + launched).sorted().map { .string($0) }),
                         "launched": .array(launched.sorted().map { .string($0) })])
    }

    private func status() -> JSONValue {
        let uptime = Double(loop.now - startedAt) / 1000
        return [
            "pid": .integer(pid),
            "since": .string(hostLock?.holder.since ?? ""),
            "uptime": .double(uptime),
            "group": .string(configuration.group.path),
            "socket": .string(socketPath),
            "extensions": .array(extensionList()),
            "features": .array(features.keys.sorted().map { .string($0) }),
            "connections": .integer(server?.connections.count ?? 0),
            "limits": [
                "maximumConnections": .integer(effectiveLimits.maximumConnections),
                "replyBudgetBytes": .integer(effectiveLimits.replyBudget),
                "maximumFeatures": .integer(configuration.maximumFeatures),
            ],
            "evictedConnections": .integer(server?.evictedPeers ?? 0),
            // Lines of the host's own output dropped for a slow or closed reader.
            "droppedLogLines": .integer(LogOutput.standardOutput.droppedLines
                                              + LogOutput.standardError.droppedLines),
        ]
    }

    /// `host.metrics`: the counters so far, and what is measured now.
    private func metricsText() -> String {
        let snapshot = HostMetrics.Snapshot(
            connections: server?.connections.count ?? 0, evictedConnections: server?.evictedPeers ?? 0,
            droppedLogLines: LogOutput.standardOutput.droppedLines + LogOutput.standardError.droppedLines,
            processes: supervisors.compactMap { supervisor in supervisor.pid.map { (supervisor.manifest.name, $0) } },
            features: features.count)
        return metrics.exposition(snapshot, group: configuration.group)
    }

    /// The supervised extensions, then those started by hand and attached.
    private func extensionList() -> [JSONValue] {
        let byName = Dictionary(attached.values.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var list: [JSONValue] = supervisors.map { supervisor in
            var entry = supervisor.statusJSON
            let peer = byName[supervisor.manifest.name]
            entry = entry.merging(["attached": .bool(peer != nil), "managed": .bool(peer?.managed ?? true),
                                   "pendingCalls": .integer(peer?.pendingCalls ?? 0),
                                   "waitingForHello": .integer(helloWaiters[supervisor.manifest.name]?.count ?? 0)])
            if supervisor.pid == nil, let peer { entry = entry.merging(["pid": .integer(peer.pid)]) }
            return entry
        }
        let supervised = Set(supervisors.map(\.manifest.name))
        for peer in byName.values.sorted(by: { $0.name < $1.name }) where !supervised.contains(peer.name) {
            list.append(peer.json.merging(["state": "attached", "restarts": 0, "attached": true,
                                           "pendingCalls": .integer(peer.pendingCalls)]))
        }
        return list
    }

    private func featureName(_ params: JSONValue?) -> Result<FeatureName, RPCError> {
        guard let text = params?["name"]?.stringValue else { return .failure(.invalidParams("\"name\" is required")) }
        do { return .success(try FeatureName(text)) } catch { return .failure(.invalidParams(error.description)) }
    }

    private func startFeature(_ name: FeatureName) -> Result<JSONValue, RPCError> {
        if features[name.rawValue] != nil {
            return .success(["name": .string(name.rawValue), "started": false, "pid": .integer(pid)])
        }
        guard features.count < configuration.maximumFeatures else {
            return .failure(.refused("the host already runs \(features.count) features, its limit; stop one first"))
        }
        do {
            let path = try configuration.group.preparedLockPath(for: .feature(name))
            guard let lock = try LivenessLock.tryAcquire(path: path, label: "feature \(name)") else {
                let holder = (try? LockProbe.status(ofLockAt: path))?.holder.map { " (pid \($0.pid))" } ?? ""
                return .failure(.refused("feature '\(name)' is already running outside the host\(holder)"))
            }
            features[name.rawValue] = lock
            if let note = lock.displacementNote { logger.warning("\(note)") }
            logger.event(.featureStarted, "feature '\(name)' started", ["feature": .string(name.rawValue)])
            server?.broadcast(HostNotification.featureChanged, ["name": .string(name.rawValue), "running": true])
            return .success(["name": .string(name.rawValue), "started": true, "pid": .integer(pid)])
        } catch {
            return .failure(.internalError(error.description))
        }
    }

    private func stopFeature(_ name: FeatureName) -> Result<JSONValue, RPCError> {
        guard let lock = features.removeValue(forKey: name.rawValue) else {
            return .failure(.refused("feature '\(name)' is not running in this host"))
        }
        lock.release()
        logger.event(.featureStopped, "feature '\(name)' stopped", ["feature": .string(name.rawValue)])
        server?.broadcast(HostNotification.featureChanged, ["name": .string(name.rawValue), "running": false])
        return .success(["name": .string(name.rawValue), "stopped": true])
    }

    /// Every feature whose lock is held, by this host or anyone else: the
    /// same answer `tether probe feature NAME` gives.
    private func featureList() -> JSONValue {
        let directory = configuration.group.path + "/locks/features"
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
            .filter { $0.hasSuffix(".lock") }.map { String($0.dropLast(5)) }.sorted()
        var list: [JSONValue] = []
        for name in names {
            guard let status = try? LockProbe.status(ofLockAt: "\(directory)/\(name).lock"), status.running else { continue }
            list.append([
                "name": .string(name),
                "pid": status.holder.map { .integer($0.pid) } ?? .null,
                "since": status.holder?.since.map { .string($0) } ?? .null,
                "owner": .string(features[name] != nil ? "host" : "other"),
            ])
        }
        return .array(list)
    }
}
