import TetherIPC
import TetherLoop

/// The extension's link to its host as a state machine: each event gives a
/// new state and the actions for `HostLink` to carry out, decided here
/// without sockets, timers or locks (unit-tested as such), as the host's
/// `ExtensionLifecycle` decides an extension's. A state carries what
/// belongs to it: the connection while it is greeted or attached, the host
/// attached to. Whether the host said it is stopping outlives its
/// connection: the detach that follows is expected, not a failure.
///
/// How it reaches a host is fixed at its start: by watching the host lock
/// and connecting to the socket (started by hand), through the link its
/// host handed it (launched: never replaced), or through the one connection
/// made before confinement (a keyboard without open access: never again).
struct HostLinkLifecycle<Connection> {
    enum Reach {
        case watching
        case launched
        case confined
    }

    enum State {
        /// Not started yet.
        case unstarted
        /// No host to reach: the lock's watcher says when one appears.
        case waiting
        /// A connection is being made; `unreachable`: said if it fails
        /// while no host holds the lock (a socket unit that did not start one).
        case connecting(unreachable: String?)
        /// A host holds its lock but did not answer: the next try is due later.
        case retrying
        /// Connected; the hello is on its way.
        case greeting(Connection)
        /// Attached to host `pid`.
        case attached(Connection, pid: Int32)
        /// The host refused the hello: not asked again until the lock changes hands.
        case refused
        /// No host can be reached any more: a launch link closed, or a
        /// confined keyboard's one connection; `toldHostIsBack`: the user
        /// was told once that a new host is up but cannot be attached to.
        case over(toldHostIsBack: Bool)
        /// Closed by the extension.
        case closed
    }

    /// What it tells the extension (the shell tells the host's messages itself).
    enum Notice {
        /// `events`: what the host agreed to tell it unasked (the hello's `events`).
        case attached(hostPID: Int32, openAccess: Bool, events: [String])
        case detached(reason: String)
        /// The host speaks no protocol version this SDK does.
        case incompatible(reason: String)
    }

    enum Event {
        /// Watching: whether a host holds the lock, and whether a socket is there.
        case watch(lockHeld: Bool, socketExists: Bool)
        /// Launched: the host's link, adopted.
        case adopted(Connection)
        /// Confined: attached before confinement to host `pid`.
        case attachedEarly(Connection, hostPID: Int32, openAccess: Bool)
        /// Started without a host (a failed adoption or early attachment): why.
        case unattached(Notice, reach: Reach)
        /// The lock's watcher: a host holds it now.
        case hostLockTaken
        /// The outcome of `.connect`; a failure says whether a host holds the lock.
        case connected(Connection)
        case connectFailed(lockHeld: Bool)
        /// The next try is due (`.scheduleRetry`).
        case retryDue
        /// The outcome of `.sayHello`: answered, unreadable, or refused
        /// (`incompatible`: for the protocol's version).
        case welcomed(hostPID: Int32, openAccess: Bool, events: [String])
        case helloUnreadable
        case helloRefused(message: String, incompatible: Bool)
        /// The host said it is stopping (a detach after that is expected).
        case hostStopping
        /// The connection closed; whether a host holds the lock now.
        case connectionClosed(lockHeld: Bool)
        /// The extension closes the link.
        case close
    }

    enum Action {
        /// Connect to the host's socket; report `.connected` or `.connectFailed`.
        case connect
        /// Serve the host's requests on it; report `.connectionClosed` when it closes.
        case listen(Connection)
        /// Say hello on it; report `.welcomed`, `.helloUnreadable` or `.helloRefused`.
        case sayHello(Connection)
        case closeConnection(Connection)
        /// `.retryDue` after `milliseconds`.
        case scheduleRetry(afterMilliseconds: UInt64)
        case cancelRetry
        case stopWatching
        /// Send the calls waiting for the outcome if attached, else fail them.
        case flushCalls
        case tell(Notice)
    }

    /// Where a call goes now.
    enum CallRoute {
        case send(Connection)
        /// The link is on its way to a host: the call waits for the outcome.
        case wait
        case fail
    }

    private(set) var reach = Reach.watching
    private(set) var state = State.unstarted
    /// Reconnecting to a host that holds its lock but does not answer yet.
    private var retry = Backoff(first: 5, maximum: 1_000)
    /// The host on the last connection said it is stopping (until the next connection).
    private(set) var hostIsStopping = false

    var hostPID: Int32? { if case .attached(_, let pid) = state { pid } else { nil } }

    var callRoute: CallRoute {
        switch state {
        case .attached(let connection, _): .send(connection)
        case .connecting, .retrying, .greeting: .wait
        default: .fail
        }
    }

    // MARK: - Transitions

    mutating func handle(_ event: Event) -> [Action] {
        if case .closed = state {
            // Late outcomes of what it had begun.
            if case .connected(let connection) = event { return [.closeConnection(connection)] }
            return []
        }
        switch event {
        case .watch(let held, let socketExists):
            reach = .watching
            if held { return connect(unreachable: nil) }
            // A socket unit may listen there: the connection starts a host.
            if socketExists { return connect(unreachable: "no host is running") }
            state = .waiting
            return [.tell(.detached(reason: "no host is running"))]
        case .adopted(let connection):
            reach = .launched
            return greet(connection)
        case .attachedEarly(let connection, let pid, let openAccess):
            reach = .confined
            hostIsStopping = false
            state = .attached(connection, pid: pid)
            return [.listen(connection), .tell(.attached(hostPID: pid, openAccess: openAccess, events: []))]
        case .unattached(let notice, let reach):
            self.reach = reach
            state = reach == .watching ? .waiting : .over(toldHostIsBack: false)
            return [.tell(notice)]
        case .hostLockTaken:
            return hostLockTaken()
        case .connected(let connection):
            guard case .connecting = state else { return [.closeConnection(connection)] }
            return greet(connection)
        case .connectFailed(let held):
            guard case .connecting(let unreachable) = state else { return [] }
            if let unreachable, !held {
                state = .waiting
                return [.flushCalls, .tell(.detached(reason: unreachable))]
            }
            return retryIfHostHeld(held)
        case .retryDue:
            guard case .retrying = state else { return [] }
            return connect(unreachable: nil)
        case .welcomed(let pid, let openAccess, let events):
            guard case .greeting(let connection) = state else { return [] }
            retry.reset()
            state = .attached(connection, pid: pid)
            return [.tell(.attached(hostPID: pid, openAccess: openAccess, events: events)), .flushCalls]
        case .helloUnreadable:
            // Its close decides what comes next.
            guard case .greeting(let connection) = state else { return [] }
            return [.closeConnection(connection)]
        case .helloRefused(let message, let incompatible):
            guard case .greeting(let connection) = state else { return [] }
            state = .refused
            let notice: Notice = incompatible
                ? .incompatible(reason: "the host refused this extension: \(message) "
                                + "(this SDK speaks version \(HostProtocol.current))")
                : .detached(reason: "the host refused this extension: \(message)")
            // The notice comes last: it may end the extension, and this link with it.
            return [.closeConnection(connection), .flushCalls, .tell(notice)]
        case .hostStopping:
            // Said on a connection (greeted or attached): the next one forgets it.
            switch state {
            case .greeting, .attached: hostIsStopping = true
            default: break
            }
            return []
        case .connectionClosed(let held):
            return connectionClosed(lockHeld: held)
        case .close:
            var actions: [Action] = [.stopWatching, .cancelRetry]
            switch state {
            case .greeting(let connection), .attached(let connection, _): actions.append(.closeConnection(connection))
            default: break
            }
            state = .closed
            return actions + [.flushCalls]
        }
    }

    private mutating func hostLockTaken() -> [Action] {
        switch (reach, state) {
        case (.confined, .over(toldHostIsBack: false)):
            // Said once: it would otherwise repeat with every host.
            state = .over(toldHostIsBack: true)
            return [.tell(.detached(reason: "a host is running, but this keyboard cannot attach to it"))]
        case (.watching, .waiting), (.watching, .refused):
            // A new holder: a refusal was the last one's.
            retry.reset()
            return connect(unreachable: nil)
        case (.watching, .retrying):
            retry.reset()
            return [.cancelRetry] + connect(unreachable: nil)
        default:
            return []
        }
    }

    /// A new connection: served, and greeted; the last one's stop is forgotten.
    private mutating func greet(_ connection: Connection) -> [Action] {
        hostIsStopping = false
        state = .greeting(connection)
        return [.listen(connection), .sayHello(connection)]
    }

    private mutating func connect(unreachable: String?) -> [Action] {
        state = .connecting(unreachable: unreachable)
        return [.connect]
    }

    /// Tries again shortly, but only while some host holds the host lock;
    /// otherwise the watcher says when one appears.
    private mutating func retryIfHostHeld(_ held: Bool) -> [Action] {
        guard held else {
            state = .waiting
            return [.flushCalls]
        }
        state = .retrying
        return [.scheduleRetry(afterMilliseconds: retry.next())]
    }

    private mutating func connectionClosed(lockHeld held: Bool) -> [Action] {
        switch state {
        case .attached(_, let pid):
            let reason = hostIsStopping ? "host pid \(pid) stopped" : "lost the connection to host pid \(pid)"
            let told: [Action] = [.tell(.detached(reason: reason))]
            guard reach == .watching else {
                // A launched extension ends with its host; a confined keyboard cannot reach another.
                state = .over(toldHostIsBack: false)
                return told + [.flushCalls]
            }
            return told + retryIfHostHeld(held)
        case .greeting:
            guard reach == .watching else {
                state = .over(toldHostIsBack: false)
                return [.flushCalls, .tell(.detached(reason: "the host that launched this extension closed its link"))]
            }
            return retryIfHostHeld(held)
        default:
            // Refused, or closed on purpose: nothing more to say.
            return []
        }
    }
}
