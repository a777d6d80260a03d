import ArgumentParser
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Logging
import TetherGroup
import TetherHost
import TetherIPC
import TetherLog
import TetherManifest

struct HostCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "host",
        abstract: "Run the host: supervise extensions and serve features on the group's socket.",
        discussion: """
            Holds the host lock (a second host on the same group exits 1), listens on \
            DIR/host.sock, starts each extension from its manifest, prefixes their output \
            with their names and restarts them by their policy. Prints one readiness line. \
            Under systemd: sends READY=1, STATUS= and STOPPING=1 to $NOTIFY_SOCKET \
            (Type=notify), WATCHDOG=1 at half of $WATCHDOG_USEC (WatchdogSec=), and serves \
            the socket a socket unit passes ($LISTEN_FDS). SIGINT or SIGTERM stops \
            everything cleanly and exits 0.
            """
    )

    @OptionGroup var group: GroupOptions

    @OptionGroup var manifests: ManifestOptions

    @Option(help: ArgumentHelp("Seconds an extension gets to exit after SIGTERM before SIGKILL.", valueName: "SECONDS"))
    var grace = Seconds(3)

    @Option(help: ArgumentHelp("Output as text (a person at a terminal) or json (one object per line).",
                               valueName: "text|json"))
    var logFormat: LogFormatOption = LogFormatOption(.text)

    @Option(help: ArgumentHelp("The least severe records written.", valueName: Logger.Level.names))
    var logLevel: LogLevelOption = LogLevelOption(.info)

    @Option(help: ArgumentHelp("Client connections served at once (extensions' links are not counted); when full, the least recently active idle one makes room.",
                               valueName: "N"))
    var maxConnections: Int = RPCServer.Limits.defaultMaximumConnections

    @Flag(help: ArgumentHelp("""
        Refuse to launch an extension this kernel cannot fully confine (no Landlock, no signal \
        scoping, or no seccomp where its role is offline): it fails with exit status 3 and the \
        others run. Without it such an extension runs with what the kernel has, and the host \
        says once what is missing.
        """))
    var requireSandbox = false

    @Flag(help: ArgumentHelp("""
        Do not show delivered pushes on the desktop. By default, under a desktop session (a \
        session bus in $DBUS_SESSION_BUS_ADDRESS or at $XDG_RUNTIME_DIR/bus), each delivered \
        push is shown through the notification server (org.freedesktop.Notifications), and its \
        closes and actions are told as events; `tether status` says whether it is shown.
        """))
    var noDesktopNotifications = false

    @Option(help: ArgumentHelp("""
        What the group's shared/ and stores/ may hold. Past it the group is marked full and \
        writes that would add are refused with a clear error; past twice it, extensions that \
        may write the group are stopped.
        """, valueName: "MiB"))
    var groupLimit = TetherHost.Host.Configuration.defaultGroupLimitMiB

    func validate() throws {
        guard maxConnections > 0 else { throw ValidationError("--max-connections must be at least 1.") }
        guard (1...1_048_576).contains(groupLimit) else { throw ValidationError("--group-limit takes 1 to 1048576 MiB.") }
    }

    func run() throws {
        let directory = try group.open()
        let (loaded, errors) = manifests.load()
        let session = try HostSession(group: directory, manifests: loaded, skipped: errors.map { "\($0)" },
                                      grace: grace, format: logFormat.value, level: logLevel.value,
                                      limits: RPCServer.Limits(maximumConnections: maxConnections),
                                      requireSandbox: requireSandbox, desktopNotifications: !noDesktopNotifications,
                                      groupLimitMiB: groupLimit)
        let outcome = session.run()
        // After a clean stop (every handle closed, every extension gone)
        // the host's objects are left to the exit, where the kernel frees
        // them at once: released one by one, a host of 3,000 extensions
        // spent a twentieth of its stop on it.
        if case .success = outcome { _ = Unmanaged.passRetained(session) }
        switch outcome {
        case .success(let code): if code != 0 { throw ExitCode(code) }
        case .failure(let error): throw error
        }
    }
}

struct LogFormatOption: ExpressibleByArgument {
    let value: LogFormat
    init(_ value: LogFormat) { self.value = value }
    init?(argument: String) {
        guard let value = LogFormat(rawValue: argument) else { return nil }
        self.value = value
    }
    var defaultValueDescription: String { value.rawValue }
    static var allValueStrings: [String] { LogFormat.allCases.map(\.rawValue) }
}

struct LogLevelOption: ExpressibleByArgument {
    let value: Logger.Level
    init(_ value: Logger.Level) { self.value = value }
    init?(argument: String) {
        guard let value = Logger.Level(rawValue: argument) else { return nil }
        self.value = value
    }
    var defaultValueDescription: String { value.rawValue }
    static var allValueStrings: [String] { Logger.Level.allCases.map(\.rawValue) }
}
