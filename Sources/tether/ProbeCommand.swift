import ArgumentParser
import TetherGroup

struct Probe: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Tell whether the host or a feature is running.",
        discussion: """
            Prints "running" (exit 0) or "not running" (exit 1). The probe never \
            disturbs the holder, and sees holders that use util-linux flock(1) too.
            """
    )

    @OptionGroup var what: TargetArguments
    @OptionGroup var group: GroupOptions
    @Flag(help: "Print one JSON object: target, name, running, lock, pid, since.")
    var json = false

    func run() throws {
        let target = try what.target()
        let path = try group.open().preparedLockPath(for: target)
        let status = try LockProbe.status(ofLockAt: path, identifyHolder: json)
        let report = StatusReport(target: target, lock: path, status: status)
        if json { try printJSON(report) } else { output(report.text) }
        if !status.running { throw ExitCode(1) }
    }
}
