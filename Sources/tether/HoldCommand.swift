import ArgumentParser
import TetherGroup

struct Hold: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hold",
        abstract: "Hold the host's or a feature's lock while a command runs.",
        discussion: """
            Takes the lock (at once, or waiting up to --wait seconds), runs the command \
            with the lock held, and lets go when the command ends. The command does not \
            inherit the lock. SIGINT, SIGTERM, SIGHUP and SIGQUIT are passed on to it.

            Exits with the command's status (128 + N if signal N ended it); 1 if someone \
            else holds the lock; 2 if the command cannot be run.

            Example: tether hold feature recording -- arecord take1.wav
            """
    )

    @OptionGroup var what: TargetArguments
    @OptionGroup var group: GroupOptions

    @Option(help: ArgumentHelp("Wait up to SECONDS for the lock instead of giving up at once.",
                               valueName: "SECONDS"))
    var wait: Seconds?

    @Argument(parsing: .postTerminator, help: ArgumentHelp("The command to run, after '--'.",
                                                           valueName: "CMD"))
    var command: [String] = []

    func validate() throws {
        if command.isEmpty { throw ValidationError("Give the command to run after '--'.") }
    }

    func run() throws {
        try Self.execute(target: try what.target(), group: group.path, wait: wait, command: command)
    }

    /// For `run()` and the fast path (`FastCommandLine`).
    static func execute(target: LockTarget, group: String?, wait: Seconds?, command: [String]) throws {
        let path = try GroupOptions.open(group).preparedLockPath(for: target)
        let session = try HoldSession(target: target, path: path, command: command, wait: wait)
        switch session.run() {
        case .success(let status): throw ExitCode(status)
        case .failure(let error): throw error
        }
    }
}
