import FoundationEssentials
import Glibc
import Logging
import TetherGroup
import TetherHost
import TetherIPC
import TetherLog
import TetherLoop
import TetherManifest

/// `tether host` on the event loop.
final class HostSession: LoopSession, @unchecked Sendable {
    private let group: GroupDirectory
    private let manifests: [ExtensionManifest]
    private let grace: Seconds
    private let logger: Logger
    private let format: LogFormat
    private let limits: RPCServer.Limits
    private let skipped: [String]
    private let requireSandbox: Bool
    private let desktopNotifications: Bool
    private let groupLimitMiB: Int
    private var host: TetherHost.Host?
    private var watchdog: ServiceWatchdog?

    init(group: GroupDirectory, manifests: [ExtensionManifest], skipped: [String], grace: Seconds,
         format: LogFormat, level: Logger.Level, limits: RPCServer.Limits, requireSandbox: Bool = false,
         desktopNotifications: Bool = true, groupLimitMiB: Int = TetherHost.Host.Configuration.defaultGroupLimitMiB) throws {
        self.group = group
        self.groupLimitMiB = groupLimitMiB
        self.desktopNotifications = desktopNotifications
        self.requireSandbox = requireSandbox
        self.manifests = manifests
        self.skipped = skipped
        self.grace = grace
        self.limits = limits
        self.format = format
        logger = Logger(label: "tether.host") { _ in TetherLogHandler(format: format, logLevel: level) }
        try super.init()
    }

    override func start() {
        // The host's output never blocks its loop: a stalled reader costs
        // dropped lines (counted in status), a closed one costs nothing.
        let render: @Sendable (String) -> String = { [format] message in
            format.render(level: .warning, message: message, metadata: [:])
        }
        LogOutput.standardOutput.attach(to: loop, renderNotice: render)
        LogOutput.standardError.attach(to: loop, sharing: .standardOutput, renderNotice: render)
        for problem in skipped { logger.error("tether: skipping \(problem)") }
        let environment = ProcessInfo.processInfo.environment
        var configuration = TetherHost.Host.Configuration(
            group: group, manifests: manifests, graceMilliseconds: grace.milliseconds,
            logger: logger, limits: limits, requireSandbox: requireSandbox)
        configuration.desktopNotifications = desktopNotifications
        configuration.groupLimitMiB = groupLimitMiB
        switch SocketActivation.listeningSocket(at: group.socketPath, environment: environment) {
        case .success(let socket): configuration.listeningSocket = socket
        case .failure(let mismatch): return finish(.failure(.environment(mismatch.description)))
        }
        let host = TetherHost.Host(loop: loop, configuration: configuration)
        do {
            try host.start()
        } catch .alreadyRunning(let pid) {
            return finish(.failure(.refused(HostError.alreadyRunning(pid: pid).description)))
        } catch {
            return finish(.failure(.environment(error.description)))
        }
        self.host = host
        guard handleSignals([SIGINT, SIGTERM], { [unowned self] _ in
            SystemdNotifier.notify("STOPPING=1\nSTATUS=stopping", environment: environment)
            self.host?.shutdown { self.finish(.success(0)) }
        }) else { return }
        // A closed terminal is a closed output, not a reason to stop serving.
        guard handleSignals([SIGHUP], { [logger] _ in
            logger.notice("tether host: SIGHUP (terminal closed?); still running; stop it with SIGTERM")
        }) else { return }
        logger.event(.hostStarted, level: .notice,
                     "tether host ready: pid \(host.pid), group \(group.path), \(manifests.count) extension(s), version \(TetherVersion.current)",
                     ["pid": .number(host.pid), "group": .string(group.path), "extensions": .number(manifests.count),
                      "version": .string(TetherVersion.current)])
        let activated = configuration.listeningSocket == nil ? "" : ", started by its socket"
        SystemdNotifier.notify("READY=1\nMAINPID=\(host.pid)\nSTATUS=serving \(group.path): \(manifests.count) extension(s)\(activated)",
                               environment: environment)
        // Pings from this loop: a stuck loop is what stops them.
        watchdog = ServiceWatchdog(loop: loop, environment: environment)
    }
}
