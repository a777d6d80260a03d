import ArgumentParser
import Glibc
import TetherGroup
import TetherLoop

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

    func line() throws -> LivenessLine { .hold(target: try what.target(), group: group.path, wait: wait, command: command) }

    func run() throws {
        throw ExitCode(try line().run())
    }

    static let forwardedSignals = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    /// For `run()` and the fast path (`FastCommandLine`); returns the
    /// command's exit status.
    static func execute(target: LockTarget, group: String?, wait: Seconds?, command: [String]) throws -> Int32 {
        let path = try GroupOptions.open(group).preparedLockPath(for: target)
        let lock: LivenessLock
        if let wait {
            let session = try LockWaitSession(target: target, path: path, wait: wait)
            if case .failure(let error) = session.run() { throw error }
            guard let acquired = session.lock else { throw CLIError.environment("the lock wait ended without the lock") }
            lock = acquired
        } else {
            guard let acquired = try LivenessLock.tryAcquire(path: path, label: target.label) else {
                throw refusal(target: target, path: path, waited: nil)
            }
            lock = acquired
        }
        if let note = lock.displacementNote { printError(note) }
        defer { lock.release() }
        // The command runs in the foreground, without the loop: spawned
        // vfork-style, its exit and the forwarded signals taken by sigwaitinfo.
        do {
            return try ChildProcess.runInForeground(command, forwarding: forwardedSignals).shellCode
        } catch .spawn(.noSuchFileOrDirectory) {
            throw CLIError.badInput("command not found: \(command[0])")
        } catch .spawn(.permissionDenied) {
            throw CLIError.badInput("cannot run \(command[0]): permission denied")
        } catch .spawn(let error) {
            throw CLIError.environment("cannot run \(command[0]): \(error)")
        } catch .wait(let error) {
            throw CLIError.environment("\(command[0]) started, but waiting for it failed: \(error)")
        }
    }

    /// Someone else holds the lock (and did for all of `waited`).
    static func refusal(target: LockTarget, path: String, waited: Seconds?) -> CLIError {
        let holder = (try? LockProbe.status(ofLockAt: path))?.holder.map { " (pid \($0.pid))" } ?? ""
        let after = waited.map { " after waiting \($0.text)" } ?? ""
        return .refused("\(target) is already running\(holder)\(after)")
    }
}
