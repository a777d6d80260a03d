import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif
import TetherLoop

/// `tether bench ARGS` runs `tether-bench --tether THIS ARGS`: the
/// benchmarks are an executable of their own (Benchmarks/), built beside
/// tether, so the CLI ships without them and an extension author's build
/// never sees them.
struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure Tether against baselines taken in the same run (runs tether-bench).",
        discussion: """
            The benchmarks are an executable of their own, tether-bench, which \
            'swift build -c release' builds next to tether (it is looked for there, then on PATH). Every argument is passed on: \
            'tether bench probe watch --json', 'tether bench --help' for the list.
            """)

    @Argument(parsing: .captureForPassthrough, help: ArgumentHelp("Passed on to tether-bench.", valueName: "ARGS"))
    var arguments: [String] = []

    func run() throws {
        let tether = ownExecutable()
        guard let bench = ExecutableSearch.find("tether-bench", besides: tether) else {
            if arguments.contains("--help") || arguments.contains("-h") { return output(Self.helpMessage()) }
            throw CLIError.environment("tether-bench is not next to \(tether) nor on PATH: in Tether's repository, "
                                       + "'swift build -c release' builds both; run .build/release/tether bench")
        }
        let argv = [bench, "--tether", tether] + arguments
        var pointers = argv.map { strdup($0) } + [nil]
        execv(bench, &pointers)
        let reason = String(cString: strerror(errno))
        pointers.forEach { free($0) }
        throw CLIError.environment("cannot run \(bench): \(reason)")
    }
}
