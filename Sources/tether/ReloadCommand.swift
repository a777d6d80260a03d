import ArgumentParser
import TetherIPC

struct Reload: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reload",
        abstract: "Ask the attached widgets (or one of them) to reload their timelines.")

    @Argument(help: ArgumentHelp("Only this widget.", valueName: "NAME"))
    var name: String?

    @OptionGroup var group: GroupOptions

    func run() throws {
        let params: JSONValue? = name.map { ["name": .string($0)] }
        let answer = try HostClient.call(try group.open(), HostMethod.reload, params)
        let names = (answer["reloaded"]?.arrayValue ?? []).compactMap(\.stringValue)
        output(names.isEmpty ? "no widget is attached" : "reloading: " + names.joined(separator: ", "))
    }
}
