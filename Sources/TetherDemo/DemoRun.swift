import TetherJSON
import TetherLog

/// `tether demo`: plays the day on a fresh stage and cleans up after it,
/// whatever happened. The command only parses its options and prints.
package enum DemoRun {
    /// Expiry rounds the day plays (for the command's help).
    package static var expiries: Int { DemoDay.expiries }

    package struct Outcome: Sendable {
        /// Every check held and nothing was left behind.
        package let ok: Bool
        /// Ctrl-C (or SIGTERM/SIGHUP) ended it early.
        package let interrupted: Bool
        /// The summary `--json` prints.
        package let summary: JSONValue
    }

    /// The executables the demo needs beside tether, missing from `bin`.
    package static func missingExecutables(in bin: String) -> [String] { DemoDay.missingExecutables(in: bin) }

    /// Plays the day with the example executables in `bin` and the demo
    /// auth server at `authServer`; the story goes to standard error (to
    /// standard output unless `json`), every process's lines too if
    /// `verbose`.
    package static func play(bin: String, authServer: String, json: Bool, verbose: Bool) throws(DemoError) -> Outcome {
        let narrator = DemoNarrator(json: json, totalSteps: DemoDay.steps)
        var echo: (@Sendable (String, String) -> Void)?
        if verbose {
            echo = { name, line in LogOutput.standardError.write("        \(name)| \(line)") }
        }
        let stage: DemoStage
        do { stage = try DemoStage(echo: echo) } catch let error as DemoError { throw error } catch { throw DemoError("\(error)") }
        narrator.say(PrintableText.escaped("tether demo: a host, its extensions and a token server, in \(stage.root)"))
        let day = DemoDay(stage: stage, narrator: narrator, bin: bin, authServer: authServer)

        var interrupted = false
        do {
            try day.play()
        } catch is DemoInterrupted {
            interrupted = true
            narrator.heading("Interrupted: stopping everything the demo started")
        } catch let failure as DemoFailure {
            narrator.failed(failure)
        } catch {
            narrator.failed(DemoFailure("\(error)"))
        }

        narrator.heading("Cleaning up")
        let leftBehind = stage.tearDown()
        if !interrupted {
            narrator.check("no process, socket or file left behind", leftBehind.isEmpty, leftBehind.joined(separator: ", "))
        } else {
            narrator.say(leftBehind.isEmpty ? "    nothing left behind" : "    left behind: \(leftBehind.joined(separator: ", "))")
        }
        let summary = DemoSummary(day: day, narrator: narrator, leftBehind: leftBehind, interrupted: interrupted)
        summary.print(to: narrator)
        return Outcome(ok: summary.ok, interrupted: interrupted, summary: summary.jsonValue)
    }
}
