import ArgumentParser
import TetherGroup
import TetherIPC

struct Feature: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feature",
        abstract: "Start, stop or list the host's features.",
        discussion: """
            A running feature holds its lock, so 'tether probe feature NAME' always agrees. \
            Features end when the host stops or dies. Without a host: exit 1, "host is not running".
            """,
        subcommands: [Start.self, Stop.self, List.self]
    )

    /// NAME and --group: the feature a command acts on.
    struct Target: ParsableArguments {
        @Argument(help: ArgumentHelp("The feature's name.", valueName: "NAME")) var name: String
        @OptionGroup var group: GroupOptions

        /// The name, checked here: a bad one never reaches the host.
        func validName() throws -> String {
            do { return try FeatureName(name).rawValue } catch { throw CLIError(error) }
        }
    }

    struct Start: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "start", abstract: "Ask the host to start a feature.")
        @OptionGroup var target: Target

        func run() throws {
            let name = try target.validName(), result = try target.group.host().startFeature(name)
            output(result.started ? "\(name) started" : "\(name) was already running")
        }
    }

    struct Stop: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "stop", abstract: "Ask the host to stop a feature.")
        @OptionGroup var target: Target

        func run() throws {
            let name = try target.validName()
            _ = try target.group.host().stopFeature(name)
            output("\(name) stopped")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List running features (held by the host or anyone else).")
        @OptionGroup var group: GroupOptions
        @Flag(help: "Print one JSON object: {\"features\": [{name, pid, since, owner}]}.") var json = false

        func run() throws {
            let listing = try group.host().features()
            try printList(listing.features, wire: listing.wire, as: "features", json: json, empty: "no features running") {
                "\($0.name)  pid \($0.pid ?? 0)  \($0.owner.rawValue)"
            }
        }
    }
}
