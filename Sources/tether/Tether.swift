import ArgumentParser
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Logging
import TetherGroup
import TetherJSON
import TetherLog
import TetherLoop

struct Tether: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tether",
        abstract: "Host and supervise extension processes that share a group directory.",
        discussion: """
            Any process can ask whether the host, or one of its features, is alive by \
            probing a lock the live party holds; the kernel drops it when the holder dies.

            Exit codes: 0 success or running, 1 not running, refused or timed out, \
            2 bad usage or input, 3 environment or I/O error.
            """,
        version: TetherVersion.current,
        subcommands: [Probe.self, Hold.self, Watch.self, HostCommand.self, Status.self, ExtensionCommand.self, Feature.self, Push.self, Reload.self, WidgetCommand.self,
                      Defaults.self, Login.self, Logout.self, Token.self, Metrics.self,
                      NewExtension.self, Doctor.self, ServiceCommand.self, Demo.self, Bench.self]
    )
}

@main
enum TetherMain {
    static func main() {
        // libuv writes to sockets and pipes with write(2), which raises
        // SIGPIPE when the peer has gone: that must be an EPIPE for the
        // connection, not the death of the host. (Children get every signal
        // back at its default: the spawn resets them.)
        signal(SIGPIPE, SIG_IGN)
        StandardDescriptors.ensureOpen()
        var code: Int32
        var arguments: [String] = []
        do {
            arguments = try FastCommandLine.arguments()
            // Plain liveness commands skip ArgumentParser's reflection (see
            // FastCommandLine).
            if let fast = FastCommandLine.parse(arguments) {
                // An exit code, not a thrown ExitCode: ArgumentParser's types
                // stay off this path.
                code = try fast.run()
            } else {
                // Anything that logs through swift-log writes as Tether does:
                // never trapping on a closed output, secrets redacted. (The
                // liveness commands log nothing and skip its set-up.)
                LoggingSystem.bootstrap { _ in TetherLogHandler() }
                CorruptionObserver.set { CommandLog.logger.storeCorrupt(path: $0, keptAs: $1, reason: $2) }
                var command = try Tether.parseAsRoot(arguments)
                try command.run()
                code = 0
            }
        } catch let error as CLIError {
            printError(error.message)
            code = error.code.rawValue
        } catch let error as GroupError {
            printError(error.description)
            code = error.isBadInput ? 2 : 3
        } catch let exit as ExitCode {
            code = exit.rawValue
        } catch {
            // ArgumentParser: --help and --version are clean exits; anything
            // else is a usage error, which the contract calls 2.
            if Tether.exitCode(for: error) == .success {
                output(Tether.fullMessage(for: error))
                code = 0
            } else {
                printError(Tether.fullMessage(for: error))
                code = CLIError.Code.badInput.rawValue
            }
        }
        // What was asked for did not all arrive (a full disk): an I/O error,
        // whatever the answer was (as grep's errors outrank its matches).
        // The host's output is its log: lines lost there are counted (status).
        // (Checked in that order: ArgumentParser's types stay off the fast path.)
        if let failure = LogOutput.standardOutput.writeFailure, arguments.first != HostCommand.configuration.commandName {
            printError("cannot write to standard output: \(failure)")
            code = CLIError.Code.environment.rawValue
        }
        exit(code)
    }
}

/// A command's result, one line to stdout at once (unbuffered: scripts and
/// tests wait for lines from long-running commands such as `watch`). The
/// data asked for is printed as it is; a closed stdout never traps.
/// (What `TetherLogHandler` does with a text record, without swift-log's
/// set-up on the liveness commands' start-up path.)
func output(_ line: String) {
    LogOutput.standardOutput.write(line)
}

/// Errors and warnings: stderr, secrets redacted.
func printError(_ message: String) {
    // Our sentences quote what others sent (a manifest's value, a host's
    // answer): escaped. Argument parser's errors and usage keep their lines,
    // each escaped: they quote the arguments (a terminal escape in one).
    let text = message.hasPrefix("Error:") || message.hasPrefix("Usage:")
        ? message.split(separator: "\n", omittingEmptySubsequences: false)
            .map { PrintableText.escaped(String($0)) }.joined(separator: "\n")
        : "tether: \(PrintableText.escaped(message))"
    LogOutput.standardError.write(Redactor.shared.redact(text))
}

/// The directory part of `path` ("." for a bare name).
func directoryName(_ path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return slash == path.startIndex ? "/" : String(path[..<slash])
}

/// The running tether binary's absolute path, to start copies of itself.
func ownExecutable() -> String {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? absolutePath(CommandLine.arguments[0])
}
