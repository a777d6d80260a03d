import ArgumentParser
import TetherGroup

struct Probe: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe",
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

    func line() throws -> LivenessLine { .probe(target: try what.target(), group: group.path, json: json) }

    func run() throws {
        let code = try line().run()
        if code != 0 { throw ExitCode(code) }
    }

    /// The probe itself, as either reader parsed it (`LivenessLine`);
    /// returns the exit code.
    static func execute(target: LockTarget, group: String?, json: Bool) throws -> Int32 {
        let (path, status) = try LockProbe.status(of: target, in: GroupOptions.open(group), identifyHolder: json)
        let report = StatusReport(target: target, lock: path, status: status)
        output(json ? report.jsonValue.description : report.text)
        return status.running ? 0 : 1
    }
}
