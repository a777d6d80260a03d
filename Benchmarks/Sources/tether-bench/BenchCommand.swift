import TetherGroup
import ArgumentParser
import FoundationEssentials
import TetherLog
import Glibc

@main
struct TetherBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tether-bench",
        abstract: "Measure Tether against baselines taken in the same run.",
        discussion: """
            Benchmarks: probe (lock probes against open+flock+close, kill(pid, 0) from \
            a pid file, a unix-socket ping/pong and spawning flock -n), watch (wake-up \
            after kill -9 of a holder, against the parent's pidfd exit notice), host (host.attach: \
            start until the three example extensions attached; host.restart: kill -9 of \
            one until its replacement attached; host.idle-cpu and host.idle-wakeups per 10 s \
            idle, CPU at clock-tick resolution; host.rss; push.cold and push.warm: a push \
            to an idle on-demand notification extension and to it running, against \
            spawning tether probe; host.status.under-spam, \
            host.cpu.under-spam (one extension printing flat out) and host.rss.after-abuse \
            (100 clients that never read); launch.confined: spawning /bin/true as the host \
            launches an extension, with the sandbox's per-launch work, against the same \
            launch unconfined; sandbox.syscall: what the allowlist adds to a system call (getppid and an argument-filtered fcntl under the offline keyboard's filter), against the same calls unfiltered; launch.cgroup, in a delegated cgroup only: the same in a cgroup \
            of its own; needs the examples built next to tether), ipc (ipc.roundtrip: host.ping on one connection, and again with both \
            ends on one CPU; ipc.throughput: requests/s with 64 in flight; each against a \
            raw unix-socket echo), tokens (tokens.cached: a valid token read, against one lstat(); \
            tokens.cached.keyring: the same read in a group keeping its secrets in the keyring, against the \
            file group's; tokens.keyring.lookup, where a Secret Service answers: a refresh token read from \
            the keyring, against reading the credentials file; \
            tokens.storm: 4 processes × 32 tasks across an expiry against demo-auth-server with 50 ms \
            of latency, in ms, against in-process single flight only and no coordination, with the \
            server's refresh and reuse counts), defaults (defaults.notify: a change until another \
            process reports it, against the atomic write), cli (whole commands as a script runs \
            them: cli.probe, cli.hold and cli.watch from spawn to exit, with their CPU and peak \
            RSS, against flock -n FILE true and /bin/true in the same run; cli.extension-start: \
            example-widget from spawn until its hello reaches the socket), footprint (the sizes and shared \
            libraries of tether and example-widget against flock(1); the widget's threads and RSS once \
            idle after one fetch with a refreshed token, against the same widget fetching nothing), \
            keyboard (keyboard.hop, where ibus-daemon and Python's IBus bindings are: a key from an \
            application's ProcessKeyEvent to its answer through the host and the example keyboard, \
            its commit first, against a key the host answers itself). \
            scale, only when named: --extensions N (1000) on-demand example widgets under one \
            host with default flags: ready, launches one by one (first and last tenth) and in a \
            burst, status (all, and 10 listed) and metrics, its idle wake-ups (sleeps ended) and preemptions a second, the host's peak and later memory, the stop and what it \
            left, and host.status under a flood of 100 clients that never read; each against \
            the same host with none or a CLI start. \
            With no NAME, runs them all but scale. Times are in \
            microseconds; for rates, p99 is the slow end.
            """
    )

    static let all = ["probe", "watch", "host", "ipc", "tokens", "defaults", "cli", "footprint", "keyboard"]
    /// Run only when named: minutes, and a thousand processes.
    static let named = ["scale"]

    @Argument(help: ArgumentHelp("Benchmarks to run (probe, watch, host, ipc, tokens, defaults, cli, footprint, keyboard, scale); all but scale by default.", valueName: "NAME"))
    var names: [String] = []

    @Option(help: ArgumentHelp("Extensions the scale benchmark runs.", valueName: "N"))
    var extensions = 1_000

    @Flag(help: "Print one JSON object: {machine, benchmarks: [{name, unit, p50, p99, baselines}]}.")
    var json = false

    @Option(help: "Scale the number of samples (1 = default; smaller is quicker and noisier).")
    var scale: Double = 1

    @Option(help: ArgumentHelp("The tether executable measured (default: next to tether-bench, else on PATH); the example extensions are used from beside it.",
                               valueName: "PATH"))
    var tether: String?

    @Option(help: ArgumentHelp("The demo auth server, for tokens (default: next to tether, else on PATH).", valueName: "PATH"))
    var authServer: String?

    func validate() throws {
        for name in names where !(Self.all + Self.named).contains(name) {
            throw ValidationError("Unknown benchmark \(quotedInput(name)); choose from \((Self.all + Self.named).joined(separator: ", ")).")
        }
        guard (1...10_000).contains(extensions) else { throw ValidationError("--extensions must be from 1 to 10000.") }
        guard scale > 0, scale <= 100 else { throw ValidationError("--scale must be above 0 and at most 100.") }
    }

    /// Exit codes as tether's: 0, 2 for bad usage, 3 when a benchmark
    /// cannot run. `tether-bench peak-memory-of CMD...` is the cli
    /// benchmark's helper (see `CLIBenchmark.reportPeakMemory`), not a command.
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        do {
            if arguments.first == CLIBenchmark.peakMemoryHelper {
                try CLIBenchmark.reportPeakMemory(of: Array(arguments.dropFirst()))
            } else {
                // HTTPClient's rule (the token benchmarks log in): a server
                // that hangs up mid-request fails the request, not the
                // process. Not in the helper above, whose command inherits it.
                signal(SIGPIPE, SIG_IGN)
                var command = try parseAsRoot(arguments)
                try command.run()
            }
            Glibc.exit(0)
        } catch let error as BenchError {
            LogOutput.standardError.write("tether-bench: \(error.description)")
            Glibc.exit(error.code)
        } catch {
            if exitCode(for: error) == .success {
                LogOutput.standardOutput.write(fullMessage(for: error))
                Glibc.exit(0)
            }
            LogOutput.standardError.write(fullMessage(for: error))
            Glibc.exit(2)
        }
    }

    func run() throws {
        try measure()
    }

    private func measure() throws {
        let selected = names.isEmpty ? Self.all : names
        let scratch = try BenchScratch(tools: try BenchTools(tether: tether, authServer: authServer))
        var results: [BenchResult] = []
        for name in selected {
            switch name {
            case "probe": results += try ProbeBenchmark(scratch: scratch, scale: scale).run()
            case "watch": results += try WatchBenchmark(scratch: scratch, scale: scale).run()
            case "host":
                results += try HostBenchmark(scratch: scratch, scale: scale).run()
                results += try HostLoadBenchmark(scratch: scratch, scale: scale).run()
                results += try SandboxBenchmark(scratch: scratch, scale: scale).run()
            case "ipc": results += try IPCBenchmark(scratch: scratch, scale: scale).run()
            case "tokens": results += try TokenBenchmark(scratch: scratch, scale: scale).run()
            case "defaults": results += try DefaultsBenchmark(scratch: scratch, scale: scale).run()
            case "cli": results += try CLIBenchmark(scratch: scratch, scale: scale).run()
            case "footprint": results += try FootprintBenchmark(scratch: scratch, scale: scale).run()
            case "keyboard": results += try KeyboardBenchmark(scratch: scratch, scale: scale).run()
            case "scale": results += try ScaleBenchmark(scratch: scratch, count: extensions).run()
            default: break
            }
        }
        let report = BenchReport(machine: MachineInfo.current(), benchmarks: results)
        if json { try printJSON(report) } else { report.printTable() }
    }
}
