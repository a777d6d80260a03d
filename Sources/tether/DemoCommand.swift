import ArgumentParser
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import TetherLog
import TetherDemo
import TetherJSON

struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Show the whole system working: a host, three extensions, a token server, a scripted day.",
        discussion: """
            Starts the demo auth server, a host on a fresh temporary group with the example widget \
            and notification extensions, and the example keyboard as if from a shell; then logs in, \
            shows widget timelines, asks the keyboard about a feature and starts it, sends pushes \
            (one within its time budget, one out of it), lets access tokens expire \(DemoRun.expiries) \
            times while every process asks at once, kills an extension and then the host with \
            SIGKILL, and starts a new host. Each step is checked. Everything runs under \
            $TMPDIR (default /tmp) and is removed at the end, also after Ctrl-C.

            Needs the example executables next to tether ('swift build'), and the demo auth \
            server, a package of its own: next to tether, on PATH, or --auth-server PATH \
            (examples/demo.sh builds everything and runs the demo).
            Exit status: 0 if every check held, 1 if one failed, 3 if the demo could not run, \
            130 when interrupted.
            """
    )

    @Flag(help: ArgumentHelp("Print the summary as one JSON object on stdout (the story goes to stderr): "
                             + "{ok, expiries, refreshes, reuseDetected, loggedOut, checks, failures, leftBehind, seconds, ...}."))
    var json = false

    @Flag(help: "Also print every line the demo's processes print.")
    var verbose = false

    @Option(help: ArgumentHelp("The demo auth server's executable (default: next to tether, else on PATH).", valueName: "PATH"))
    var authServer: String?

    func run() throws {
        let bin = URL(fileURLWithPath: ownExecutable()).deletingLastPathComponent().path
        let missing = DemoRun.missingExecutables(in: bin)
        guard missing.isEmpty else {
            throw CLIError.environment("the demo needs \(missing.joined(separator: ", ")) next to tether in \(bin): "
                + "run 'swift build' (it builds them all) and try again")
        }
        let outcome: DemoRun.Outcome
        do {
            let server = try demoAuthServerExecutable(authServer, besides: ownExecutable())
            outcome = try DemoRun.play(bin: bin, authServer: server, json: json, verbose: verbose)
        } catch let error as DemoError {
            throw error.isBadInput ? CLIError.badInput(error.description) : CLIError.environment(error.description)
        }
        if json { output(outcome.summary.description) }
        if outcome.interrupted { throw ExitCode(130) }
        if !outcome.ok { throw ExitCode(1) }
    }
}
