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

    struct Start: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "start", abstract: "Ask the host to start a feature.")
        @Argument(help: ArgumentHelp("The feature's name.", valueName: "NAME")) var name: String
        @OptionGroup var group: GroupOptions

        func run() throws {
            let name = try validated(name)
            let result = try HostClient(group: try group.open()).startFeature(name)
            output(result["started"]?.boolValue == false ? "\(name) was already running" : "\(name) started")
        }
    }

    struct Stop: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "stop", abstract: "Ask the host to stop a feature.")
        @Argument(help: ArgumentHelp("The feature's name.", valueName: "NAME")) var name: String
        @OptionGroup var group: GroupOptions

        func run() throws {
            let name = try validated(name)
            _ = try HostClient(group: try group.open()).stopFeature(name)
            output("\(name) stopped")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List running features (held by the host or anyone else).")
        @OptionGroup var group: GroupOptions
        @Flag(help: "Print one JSON object: {\"features\": [{name, pid, since, owner}]}.") var json = false

        func run() throws {
            let list = try HostClient(group: try group.open()).features()
            if json { return try printJSON(JSONValue.object(["features": list])) }
            let items = list.arrayValue ?? []
            if items.isEmpty { output("no features running") }
            for item in items {
                output("\(item["name"]?.stringValue ?? "?")  pid \(item["pid"]?.intValue ?? 0)  \(item["owner"]?.stringValue ?? "")")
            }
        }
    }
}

private func validated(_ name: String) throws -> String {
    do { return try FeatureName(name).rawValue } catch { throw CLIError(error) }
}
