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

/// Extensions on the socket and on their links: hello, identity from the
/// kernel, the watchdog's verdicts, and work waiting for a hello.
extension Host {
    /// The read-only keyboard behind `connection`, if it is one: by its
    /// hello (where its manifest, not its claim, says whether it has open
    /// access), or, on a connection that never said hello, by the process at
    /// the other end: one of a read-only keyboard the host launched (its
    /// process group) or one attached by hand.
    func readOnlyPeer(_ connection: RPCConnection) -> String? {
        // The process first, whatever the connection said: a second
        // connection's hello under another name changes nothing.
        if let pid = connection.peer?.pid {
            if !supervisors.readOnlyKeyboards.isEmpty, let supervisor = supervisors.readOnlyKeyboard(owning: PeerProcess(pid: pid)) {
                return supervisor.manifest.name
            }
            if let entry = attached.readOnlyKeyboards.first(where: { $0.pid == pid }) {
                return entry.name
            }
        }
        guard let entry = attached[ObjectIdentifier(connection)] else { return nil }
        return entry.role == .keyboard && !entry.openAccess ? entry.name : nil
    }

    /// The extension behind `connection`, if it is one: its launch's link,
    /// a hello on it, a process of a launch, or the process of one attached
    /// by hand. For what no extension may do (stop another).
    func extensionPeer(_ connection: RPCConnection) -> String? {
        let key = ObjectIdentifier(connection)
        if let name = links[key]?.name ?? attached[key]?.name { return name }
        // Once found to be the user's, always: no walk of every extension
        // per request (a stop of 3,000 sent one each: 3,000² walks).
        guard !userPeers.contains(key), let pid = connection.peer?.pid else { return nil }
        let process = PeerProcess(pid: pid)
        if let supervisor = supervisors.owner(of: process) { return supervisor.manifest.name }
        if let name = attached.all.first(where: { $0.pid == pid })?.name { return name }
        userPeers.insert(key)
        return nil
    }

    /// `extension.hello` (read with the host's rule for names, `HostRoutes`).
    /// A hello without a version is version 1: shell and Python extensions
    /// written before versions keep working.
    func hello(_ connection: RPCConnection, _ hello: ExtensionHello) -> Result<HelloAnswer, RPCError> {
        let (name, version) = (hello.name, hello.protocolVersion)
        guard let role = ExtensionRole(rawValue: hello.role) else { return .failure(ExtensionHello.invalidRole) }
        guard let peer = connection.peer else { return .failure(.internalError("peer credentials unavailable")) }
        let key = ObjectIdentifier(connection)
        if let existing = attached[key] {
            return .failure(.refused("this connection already said hello, as '\(existing.name)'"))
        }
        if let refusal = linkRefusal(connection, name: name, pid: peer.pid) { return .failure(refusal) }
        if let otherKey = attached.connection(named: name), otherKey != key, let other = attached[otherKey] {
            // Its launch's link outranks whatever took the name on the socket.
            guard links[key] != nil, links[ObjectIdentifier(other.connection)] == nil else {
                return .failure(.refused("extension '\(name)' is already attached (pid \(other.pid))"))
            }
            logger.warning("pid \(other.pid) was attached as '\(name)', which this host launched; disconnected")
            detach(other.connection)
            other.connection.close()
        }
        let supervisor = supervisor(named: name)
        // Open access comes from the host's manifest where it has one: a
        // claim beyond it is refused, not quietly narrowed.
        if let manifest = supervisor?.manifest, hello.openAccess == true, !manifest.openAccess {
            logger.warning("pid \(peer.pid) said hello as '\(name)' claiming open access, which its manifest does not grant; refused")
            return .failure(.refused("extension '\(name)' has no open access in the host's manifest"))
        }
        // Its launch's link: whichever of its processes speaks on it.
        let managed = links[key] != nil
        // Its own budget, up to the host's ceiling: a push is held no longer.
        let asked = hello.timeBudgetMilliseconds
        let ceiling = UInt64(HostProtocol.maximumPushBudgetMilliseconds)
        let budget = asked.map { min($0, ceiling) }
        if let asked, asked > ceiling {
            logger.warning("extension '\(name)' asked for a push budget of \(asked) ms; it has \(ceiling) ms, the host's ceiling")
        }
        var entry = AttachedExtension(
            name: name, role: supervisor?.manifest.role ?? role, pid: peer.pid, managed: managed,
            openAccess: supervisor?.manifest.openAccess ?? hello.openAccess ?? false,
            timeBudgetMilliseconds: budget, protocolVersion: version, connection: connection)
        // Refused before its watchdog is made: a refused hello leaves nothing ticking.
        if !managed, attached.byHandCount >= effectiveLimits.maximumConnections {
            return .failure(.refused("the host already has \(attached.byHandCount) extensions attached by hand, its limit "
                                     + "(start it with --max-connections to allow more)"))
        }
        // Only protocol 2 answers pings; version 1 would never be seen alive.
        let period = supervisor?.manifest.watchdogMilliseconds ?? ExtensionManifest.defaultWatchdogMilliseconds
        if version >= 2, period > 0 {
            entry.watchdog = Watchdog(clock: watchdogClock, connection: connection, periodMilliseconds: period) { [unowned self] in
                self.unresponsive(connection, period: period)
            }
        } else if period > 0, supervisor != nil {
            logger.warning("""
                extension '\(name)' speaks protocol 1, which cannot answer pings: its watchdog is not enforced \
                (speak protocol 2, or set "watchdog": 0 in its manifest)
                """)
        }
        attached.add(entry, key)
        if managed, hello.endsOnSigterm { supervisor?.endsOnSigterm = peer.pid }
        // Asked in the hello: what it hears without asking again.
        let events = subscribers.subscribe(connection, hello: hello.events)
        // An extension's connection is no client: it never counts toward
        // the client limit and is never evicted to make room for others.
        server?.pin(connection)
        metrics.extensionAttached(metricLabel(name), managed: managed)
        logger.event(.extensionAttached, "extension '\(name)' attached (pid \(peer.pid)\(managed ? "" : ", started by hand"))",
                     ["extension": .string(name), "pid": .number(peer.pid), "role": .string(entry.role.rawValue),
                      "managed": .bool(managed),
                      "protocol": .number(version)])
        publish(HostNotification.extensionChanged, entry.status(attached: true))
        widgetAttachmentChanged(entry)
        if managed { supervisor?.noteActivity() }
        answerHelloWaiters(name, with: entry)
        return .success(HelloAnswer(hostPID: pid, group: configuration.group.path, managed: managed,
                                    openAccess: entry.openAccess, timeBudgetMilliseconds: budget, protocolVersion: version,
                                    capabilities: capabilities(for: entry), events: events))
    }

    /// What hello's answer offers: what the extension may call, by its
    /// methods' descriptions (a keyboard without open access only what
    /// reads; no extension what is the user's). A capability that names no
    /// method (what the host sends) is always offered.
    func capabilities(for entry: AttachedExtension) -> [String] {
        let readOnly = entry.role == .keyboard && !entry.openAccess
        return HostProtocol.capabilities.filter { capability in
            guard let methods = Self.capabilityMethods[capability] else { return true }
            return methods.contains { method in
                switch router.routes[method]?.access {
                case .reading?: true
                case .relaying?: !readOnly
                case .user?, nil: false
                }
            }
        }
    }

    /// The requests each capability stands for: a method's own name, but
    /// "push", "reload" and "feature".
    static let capabilityMethods: [String: [String]] = {
        var methods: [String: [String]] = ["push": [HostMethods.push.name], "reload": [HostMethods.reload.name],
                                           "feature": [HostMethods.featureStart.name, HostMethods.featureStop.name,
                                                       HostMethods.featureList.name]]
        for name in [HostMethods.defaultsChanged.name, HostMethods.tokenGet.name, HostMethods.extensionStart.name,
                     HostMethods.metrics.name, HostMethods.subscribe.name, HostMethods.widgetEntry.name] {
            methods[name] = [name]
        }
        return methods
    }()
    /// Why a hello as `name` is refused on `connection`, if it is: a link
    /// speaks only as its launch; the socket never for a launch (its
    /// processes have their link), nor as an extension this host is running
    /// or could launch (one of its manifests) unless its instance lock is
    /// the caller's.
    func linkRefusal(_ connection: RPCConnection, name: String, pid: Int32) -> RPCError? {
        if let link = links[ObjectIdentifier(connection)]?.name {
            guard link != name else { return nil }
            logger.warning("extension '\(link)' said hello as '\(name)' over its link; refused")
            return .refused("this link is extension '\(link)''s; it cannot say hello as '\(name)'")
        }
        let process = PeerProcess(pid: pid)
        if let owner = supervisors.owner(of: process) {
            logger.warning("pid \(pid), a process of extension '\(owner.manifest.name)', said hello as '\(name)' on the socket; refused")
            return .refused("a process of extension '\(owner.manifest.name)' speaks only through the link the host handed it")
        }
        if let launched = supervisor(named: name), launched.isLaunched {
            let running = launched.pid.map { " (pid \($0))" } ?? ""
            logger.warning("pid \(pid) said hello as '\(name)', which this host runs\(running); refused")
            return .refused("extension '\(name)' is running\(running), launched by this host")
        }
        // The host could launch it itself: its name (and its pushes) are
        // not for whoever asks first. One started by hand under it attaches
        // only while it holds its instance lock, so the host cannot.
        if let managed = supervisor(named: name), !LockProbe.isHeld(byProcess: pid, lockAt: managed.lockPath) {
            logger.warning("pid \(pid) said hello as '\(name)', which this host launches itself, without holding its instance lock; refused")
            return .refused("extension '\(name)' is this host's to launch; a process the host did not launch "
                            + "may attach as it only while holding its instance lock")
        }
        return nil
    }

    func adoptLink(_ descriptor: Int32, pid: Int32, of name: String) {
        closeLinks(of: name)
        guard let server else { return _ = close(descriptor) }
        do {
            let connection = try server.adopt(descriptor: descriptor, peer: PeerCredentials(pid: pid, uid: geteuid(), gid: getegid()))
            links[ObjectIdentifier(connection)] = (name, connection)
            linkKeys[name, default: []].insert(ObjectIdentifier(connection))
        } catch {
            logger.warning("extension '\(name)' cannot reach the host: its link failed (\(error))")
        }
    }

    func closeLinks(of name: String) {
        for key in linkKeys[name] ?? [] { links[key]?.connection.close() }
    }

    /// A ping went unanswered for a whole period. The host's own child is
    /// killed (SIGKILL to its group) and handled by its restart policy; one
    /// started by hand is not the host's to kill: it is disconnected.
    func unresponsive(_ connection: RPCConnection, period: UInt64) {
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
    func metricLabel(_ name: String) -> String {
        supervisor(named: name) != nil ? name : "by-hand"
    }

    func supervisor(named name: String) -> ExtensionSupervisor? {
        supervisors[name]
    }

    func attachedEntry(named name: String) -> AttachedExtension? {
        attached[name: name]
    }

    /// Calls `answer` with the extension once it has said hello (at once if
    /// it has), or nil if it goes without; the result cancels the wait.
    func whenAttached(_ name: String, _ answer: @escaping (AttachedExtension?) -> Void) -> () -> Void {
        if let entry = attachedEntry(named: name), isUsable(entry) {
            answer(entry)
            return {}
        }
        nextWaiterID += 1
        let id = nextWaiterID
        helloWaiters[name, default: []].append((id, answer))
        supervisor(named: name)?.noteHelloWaiters(1)
        return { [weak self] in
            guard let self, let index = self.helloWaiters[name]?.firstIndex(where: { $0.id == id }) else { return }
            self.helloWaiters[name]?.remove(at: index)
            self.supervisor(named: name)?.noteHelloWaiters(-1)
        }
    }

    /// What a supervisor tells: a launch's link to adopt, an idle end to
    /// announce, a launch gone (what is left of it speaks no more).
    func supervisor(_ supervisor: ExtensionSupervisor, told notice: SupervisorNotice) {
        let name = supervisor.manifest.name
        switch notice {
        case .link(let descriptor, let pid):
            adoptLink(descriptor, pid: pid, of: name)
        case .willTerminate:
            // Version 1 knows no such notice; SIGTERM tells it.
            guard let entry = attachedEntry(named: name), entry.protocolVersion >= 2 else { return }
            entry.connection.notify(HostNotification.willTerminate, ["reason": "idle"])
        case .gone(let relaunching):
            closeLinks(of: name)
            endFeatures(startedBy: name)
            if !relaunching { answerHelloWaiters(name, with: nil) }
        }
    }

    /// Not on its way out: an instance being ended takes no new work (the
    /// work waits for the next one).
    func isUsable(_ entry: AttachedExtension) -> Bool {
        !(entry.managed && supervisor(named: entry.name)?.isEnding == true)
    }

    func answerHelloWaiters(_ name: String, with entry: AttachedExtension?) {
        guard let waiters = helloWaiters.removeValue(forKey: name) else { return }
        supervisor(named: name)?.noteHelloWaiters(-waiters.count)
        for waiter in waiters { waiter.answer(entry) }
    }
}
