import ArgumentParser
import TetherGroup
import TetherIPC
import TetherLoop

/// `--group DIR`, shared by every command that touches the group directory.
struct GroupOptions: ParsableArguments {
    @Option(name: .customLong("group"), help: ArgumentHelp(
        "The group directory (default: $TETHER_GROUP, else ${XDG_STATE_HOME:-~/.local/state}/tether/default).",
        valueName: "DIR"))
    var path: String?

    func open() throws(GroupError) -> GroupDirectory { try Self.open(path) }

    /// The group's host, for one call (nothing is connected until then).
    func host() throws -> HostClient { HostClient(group: try open()) }

    static func open(_ path: String?) throws(GroupError) -> GroupDirectory {
        let resolved = try GroupDirectory.resolvePath(explicit: path, variable: ProcessEnvironment.value)
        return try GroupDirectory(path: resolved)
    }
}
