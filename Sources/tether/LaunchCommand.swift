import ArgumentParser
import CTetherSystem
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import TetherHost

/// The host starts every extension through this: it ties the extension's
/// life to the host's (the kernel sends SIGTERM when the host dies, even by
/// kill -9), then becomes the extension with exec. libuv has no hook to run
/// code between fork and exec, hence a separate step.
struct LaunchExtension: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "launch-extension",
        abstract: "Internal: run an extension that ends when its host dies.",
        shouldDisplay: false)

    @Option(help: "The host's pid.") var parent: Int32
    @Option(help: "Milliseconds the extension's group gets after SIGTERM if the host dies.")
    var graceMilliseconds: Int32 = LaunchExtension.defaultGraceMilliseconds
    static let defaultGraceMilliseconds: Int32 = 3_000
    @Argument(parsing: .postTerminator) var command: [String] = []

    func validate() throws {
        if command.isEmpty { throw ValidationError("Give the extension's command after '--'.") }
    }

    func run() throws {
        _ = try Self.execute(parent: parent, graceMilliseconds: graceMilliseconds, command: command)
    }

    /// Becomes the extension; returns (or throws) only if it cannot. On the
    /// fast command line too: it runs before every extension start.
    static func execute(parent: Int32, graceMilliseconds: Int32, command: [String]) throws -> Int32 {
        // PDEATHSIG fires when the thread that forked us exits; the host
        // spawns from its loop thread, which lives as long as the host.
        guard tether_set_parent_death_signal(SIGTERM) == 0 else {
            throw CLIError.environment("cannot tie the extension to its host: \(String(cString: strerror(errno)))")
        }
        // The host may have died before the line above took effect.
        guard getppid() == parent else { throw CLIError.refused("the host (pid \(parent)) is gone") }
        var argv = command.map { strdup($0) } + [nil]
        // tether itself ignores SIGPIPE; an ignored signal stays ignored
        // across exec, and the extension should start with the default.
        signal(SIGPIPE, SIG_DFL)
        // The host raised its own descriptor limit; the extension gets the usual one.
        DescriptorLimit.resetForChild()
        // PDEATHSIG reaches this process only; a reaper in its group ends the
        // rest (background children) if the host dies. Without pidfds
        // (Linux < 5.3) the host still ends the group when it can.
        _ = tether_start_group_reaper(parent, graceMilliseconds)
        // An executable just written can be briefly "busy" (ETXTBSY): a
        // process that forked while the writer's descriptor was open holds a
        // copy until it execs. That passes in microseconds: a bounded retry
        // backoff (at most 50 × 20 ms) before the exec, not a wait on state.
        for _ in 0..<50 {
            execv(command[0], &argv)
            guard errno == ETXTBSY else { break }
            usleep(20_000)
        }
        let reason = String(cString: strerror(errno))
        argv.forEach { free($0) }
        throw CLIError.badInput("cannot run \(command[0]): \(reason)")
    }
}
