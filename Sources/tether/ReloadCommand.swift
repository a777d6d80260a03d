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
        let names = try group.host().reload(name).reloaded
        output(names.isEmpty ? "no widget is attached" : "reloading: " + names.joined(separator: ", "))
    }
}
