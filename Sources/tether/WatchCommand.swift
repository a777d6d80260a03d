import ArgumentParser
import TetherGroup

enum WatchUntil: String, ExpressibleByArgument, CaseIterable {
    case running
    case notRunning = "not-running"
}

struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Report when the host or a feature starts or stops running.",
        discussion: """
            Prints the current state, then a line each time it changes ("running" or \
            "not running"; with --json one JSON object per line). With --until, waits \
            for that state, prints it once and exits 0. Exits 1 if --timeout passes \
            first. Driven by kernel events: an idle watch uses no CPU.

            'tether watch notifications' prints, instead, whether the host shows pushes on the \
            desktop (as 'tether status' says it; with --json {"desktopNotifications": {state, \
            server?, version?, reason?}}), then each close and each action of the notifications \
            it shows, one line each ("notification 7: closed, expired (1)", "notification 7: \
            action open"; with --json {event, notification, id?, reason} or {event, notification, \
            id?, action}), until stopped.
            """
    )

    @OptionGroup var what: TargetArguments
    @OptionGroup var group: GroupOptions

    @Option(help: "Exit 0 as soon as the state is this one (running or not-running).")
    var until: WatchUntil?

    @Option(help: ArgumentHelp("Give up after SECONDS and exit 1.", valueName: "SECONDS"))
    var timeout: Seconds?

    @Flag(help: "Print JSON objects (as 'probe --json') instead of text.")
    var json = false

    func line() throws -> LivenessLine {
        .watch(target: try what.target(), group: group.path, until: until, timeout: timeout, json: json)
    }

    func run() throws {
        if what.kind == .notifications {
            guard what.name == nil else { throw CLIError.badInput("'notifications' takes no name") }
            guard until == nil else { throw CLIError.badInput("--until applies to the host or a feature") }
            let session = try NotificationEventSession(group: try group.open(), mode: .watch, json: json, timeout: timeout)
            switch session.run() {
            case .success(let code): if code != 0 { throw ExitCode(code) }
            case .failure(let error): throw error
            }
            return
        }
        let code = try line().run()
        if code != 0 { throw ExitCode(code) }
    }

    /// For `run()` and the fast path (`FastCommandLine`); returns the exit code.
    static func execute(target: LockTarget, group: String?, until: WatchUntil?, timeout: Seconds?, json: Bool) throws -> Int32 {
        let path = try GroupOptions.open(group).preparedLockPath(for: target)
        let session = try WatchSession(target: target, path: path, until: until, timeout: timeout, json: json)
        switch session.run() {
        case .success(let code): return code
        case .failure(let error): throw error
        }
    }
}
