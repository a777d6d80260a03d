import TetherJSON
import FoundationEssentials
import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import TetherAuth
import TetherGroup
import TetherHTTP
import TetherIPC
import TetherLog
import TetherLoop

/// A running extension: its identity, its connection to the host, and what
/// it may do. Every role gets one. It is isolated to `ExtensionActor`, the
/// extension's loop, where the role's methods are called too.
@ExtensionActor
public final class ExtensionContext {
    /// Who this extension is and where it runs: its name, role and group.
    public let identity: ExtensionIdentity
    let loop: EventLoop
    /// Granted by the host's manifest once attached; before that, as the
    /// environment said.
    public private(set) var hasOpenAccess: Bool
    private var link: HostLink?
    private var instanceLock: LivenessLock?
    private var finished = false
    var onFinish: (@Sendable (Int32) -> Void)?
    var onHostEvent: ((HostLink.Event) -> Void)?
    private var broker: TokenBroker?
    private var httpClient: HTTPClient?
    private var defaultsCache: SharedStore?
    var onReloadRequest: (() -> Void)?

    init(identity: ExtensionIdentity, loop: EventLoop) {
        self.identity = identity
        self.loop = loop
        self.hasOpenAccess = identity.openAccess
        logger = ExtensionLogger.make(name: identity.name)
        let logger = self.logger
        CorruptionObserver.set { logger.storeCorrupt(path: $0, keptAs: $1, reason: $2) }
    }

    /// Records on standard error (JSON lines under a host, text at a
    /// terminal), which the host logs at their level under this
    /// extension's name, metadata kept: what `log` writes past a plain
    /// line, and the SDK's own events (`auth.refresh.*`).
    nonisolated let logger: Logger

    /// The extension's name, from its manifest or `--name`.
    public var name: String { identity.name }
    /// The command-line arguments the SDK did not take for itself.
    public var arguments: [String] { identity.arguments }
    /// Whether a host has answered its hello and it is attached now.
    public var isHostAttached: Bool { link?.isAttached ?? false }
    /// The pid of the host this extension is attached to.
    var hostPID: Int32? { link?.hostPID }

    /// The group's shared files; read-only without open access.
    public var container: SharedContainer {
        SharedContainer(group: identity.group, owner: name, readOnly: !hasOpenAccess)
    }

    /// Asks a widget to reload its timeline now (reason `content`).
    public func reloadTimeline() {
        onReloadRequest?()
    }

    /// This process's defaults store, made on first use.
    func defaultsStore() throws(GroupError) -> SharedStore {
        if let defaultsCache { return defaultsCache }
        let made = try SharedStore.defaults(in: identity.group)
        defaultsCache = made
        return made
    }

    /// HTTP on this extension's loop (libcurl, loaded at the first request).
    var http: HTTPClient {
        if let httpClient { return httpClient }
        let made = HTTPClient(loop: loop)
        httpClient = made
        return made
    }

    /// This process's token broker, made on first use.
    func tokenBroker() throws(GroupError) -> TokenBroker {
        if let broker { return broker }
        let made = try TokenBroker(group: identity.group, http: http, logger: logger)
        broker = made
        return made
    }

    /// The one way an extension logs: the host logs every call at its
    /// `level` under the extension's name, with its `metadata`
    /// (`context.log("low stock", level: .warning, metadata: ["sku": "A1"])`).
    /// A plain line (info, no metadata) goes to standard output, what an
    /// extension started by hand prints at its terminal, as one line (what
    /// would end it or drive the terminal, escaped); anything else is a
    /// record on standard error, shown from `TETHER_LOG_LEVEL` (info) up.
    /// Never traps when the host is gone, never blocks the loop when the
    /// host reads slowly (it rate-limits chatty extensions): excess lines
    /// are dropped, so pushes and pings are still answered.
    public func log(_ line: String, level: Logger.Level = .info, metadata: Logger.Metadata = [:]) {
        guard level == .info, metadata.isEmpty else {
            return logger.log(level: level, "\(line)", metadata: metadata)
        }
        LogOutput.standardOutput.write(PrintableText.escaped(line))
    }

    /// Probes a feature's lock directly: works with or without a host, and
    /// never disturbs the holder.
    public func featureStatus(_ feature: String) throws(ExtensionError) -> LockStatus {
        guard let name = try? FeatureName(feature) else { throw .invalidName(feature) }
        do {
            return try LockProbe.status(ofLockAt: identity.group.lockPath(for: .feature(name)))
        } catch {
            throw .environment(error.description)
        }
    }

    /// Whether a feature is running: its lock is held, by the host or
    /// anyone (the same answer `tether probe feature NAME` gives).
    public func isFeatureRunning(_ feature: String) throws(ExtensionError) -> Bool {
        try featureStatus(feature).running
    }

    /// Asks the host to start a feature (the openURL hop): true if it was
    /// started now, false if it was already running.
    @discardableResult
    public func startFeature(_ feature: String) async throws(ExtensionError) -> Bool {
        guard FeatureName.isValid(feature) else { throw .invalidName(feature) }
        return try await call(HostMethods.featureStart, NamedTarget(name: feature)).started
    }

    /// Asks the host to stop a feature. The host decides who may: a
    /// keyboard without open access is refused.
    public func stopFeature(_ feature: String) async throws(ExtensionError) {
        guard FeatureName.isValid(feature) else { throw .invalidName(feature) }
        _ = try await call(HostMethods.featureStop, NamedTarget(name: feature))
    }

    /// `method` with its types: the answer read as the description says,
    /// or why not.
    func call<Parameters, Answer>(_ method: MethodDescriptor<Parameters, Answer>,
                                  _ parameters: Parameters) async throws(ExtensionError) -> Answer {
        let answer = try await call(method.name, parameters.wire)
        do throws(RPCError) {
            return try Answer(wire: answer)
        } catch {
            throw .environment("the host's answer to \(method.name) cannot be read: \(error.message)")
        }
    }

    /// Any request to the host; `.hostNotRunning` when there is none. While
    /// the link is still connecting to a host that holds its lock, the call
    /// waits for it (up to 5 s). A cancelled task stops waiting at once
    /// (`.cancelled`); the host's answer, if it comes, is dropped.
    public func call(_ method: String, _ params: JSONValue? = nil) async throws(ExtensionError) -> JSONValue {
        guard let link else { throw .hostNotRunning }
        let waiter = CallWaiter()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<JSONValue, ExtensionError>, Never>) in
                waiter.wait(continuation)
                link.call(method, params) { waiter.resume($0) }
            }
        } onCancel: {
            waiter.resume(.failure(.cancelled))
        }
        return try result.get()
    }

    /// A request to the host from the SDK's own drivers, on the loop;
    /// `.hostNotRunning` at once when none is attached.
    func send(_ method: String, _ params: JSONValue?, _ completion: @escaping (Result<JSONValue, ExtensionError>) -> Void) {
        guard let link else { return completion(.failure(.hostNotRunning)) }
        link.call(method, params, completion)
    }

    /// Ends the extension: releases its lock and connection, stops the loop.
    public func finish(exitCode: Int32 = 0) {
        guard !finished else { return }
        finished = true
        onFinish?(exitCode)
        link?.close()
        link = nil
        instanceLock?.release()
        instanceLock = nil
        loop.stop()
    }

    // MARK: - Start-up

    /// Started by hand, takes the instance lock (a host holds it for the
    /// children it starts). False if the extension cannot run.
    func claimInstance() -> Bool {
        if !identity.isManaged {
            // A host holds this lock for the children it starts; one started
            // by hand holds its own, so no host starts a second copy.
            do {
                let path = try identity.group.preparedLockPath(for: .extensionInstance(FeatureName(name)))
                guard let lock = try LivenessLock.tryAcquire(path: path, label: "extension \(name)") else {
                    let holder = (try? LockProbe.status(ofLockAt: path))?.holder
                        .map { " (its instance lock is held by pid \($0.pid))" } ?? ""
                    printFailure("extension '\(name)' is already running\(holder)")
                    finish(exitCode: 1)
                    return false
                }
                instanceLock = lock
            } catch {
                printFailure(error.description)
                finish(exitCode: 3)
                return false
            }
        }
        return true
    }

    /// Starts watching for a host. False if the extension cannot run.
    /// `early`: attached before confinement (a keyboard without open
    /// access started by hand), which then connects to no host.
    func start(hello: JSONValue, early: EarlyAttachment.Outcome? = nil) -> Bool {
        let link = HostLink(loop: loop, socketPath: identity.socketPath,
                            hostLockPath: identity.group.lockPath(for: .host), inherited: identity.hostLink,
                            hello: hello, early: early) { [unowned self] event in
            self.hostEvent(event)
        }
        self.link = link
        do {
            try link.start()
        } catch {
            printFailure("cannot watch for a host: \(error)")
            finish(exitCode: 3)
            return false
        }
        return true
    }

    private func hostEvent(_ event: HostLink.Event) {
        switch event {
        case .attached(let pid, let openAccess, _):
            hasOpenAccess = openAccess
            log(identity.isManaged ? "attached to host pid \(pid)" : "attached to host pid \(pid) (started by hand)")
        case .detached(let reason):
            if identity.isManaged {
                // A child ends with the host that started it; a link lost
                // while the host lives is a failure (its restart policy applies).
                log("\(reason); exiting with my host")
                onHostEvent?(event)
                return finish(exitCode: link?.hostIsStopping == false ? 1 : 0)
            }
            let note = link?.attachesOnlyAtStart == true ? " (\(HostLink.attachesOnlyAtStart))" : ""
            log("\(reason); carrying on without a host\(note)")
        case .incompatible(let reason):
            printFailure(reason)
            return finish(exitCode: 3)
        case .message(let method, _, _):
            // The host's own log says it is stopping: a line from each of
            // thousands of extensions would only slow the stop. The link
            // has marked it; no role has anything to do with it.
            if method == HostNotification.stopping { return log("host is stopping", level: .debug) }
            if method == HostNotification.willTerminate {
                // An on-demand extension with nothing to do: end cleanly
                // before the host's SIGTERM.
                log("the host is ending this extension (idle)")
                onHostEvent?(event)
                return finish()
            }
        }
        onHostEvent?(event)
    }

    func printFailure(_ message: String) {
        LogOutput.standardError.write(PrintableText.escaped("\(name): \(message)"))
    }
}

/// A host call's continuation, resumed once: by the answer or by the
/// task's cancellation, whichever comes first (from any thread).
private final class CallWaiter: Sendable {
    private let state = Mutex<(continuation: CheckedContinuation<Result<JSONValue, ExtensionError>, Never>?,
                               early: Result<JSONValue, ExtensionError>?, done: Bool)>((nil, nil, false))

    func wait(_ continuation: CheckedContinuation<Result<JSONValue, ExtensionError>, Never>) {
        let early: Result<JSONValue, ExtensionError>? = state.withLock { state in
            if let early = state.early {
                state.done = true
                return early
            }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(returning: early) }
    }

    func resume(_ result: Result<JSONValue, ExtensionError>) {
        let continuation = state.withLock { state -> CheckedContinuation<Result<JSONValue, ExtensionError>, Never>? in
            guard !state.done else { return nil }
            guard let continuation = state.continuation else {
                if state.early == nil { state.early = result }  // cancelled before it waited
                return nil
            }
            state.done = true
            state.continuation = nil
            return continuation
        }
        continuation?.resume(returning: result)
    }
}
