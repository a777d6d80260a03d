import ArgumentParser
import TetherGroup

/// `tether widget`: the widgets, as a person sees them.
struct WidgetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "widget",
        abstract: "Show widgets where a person sees them (a status bar).",
        subcommands: [WidgetWatch.self])
}

struct WidgetWatch: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print a widget's entry, then a line each time what it shows changes.",
        discussion: """
            For a status bar that reads a command's lines: waybar's `custom` module \
            ("return-type": "json", --format waybar), polybar's `custom/script` with \
            `tail = true` (--format text), i3blocks with `interval=persist` and \
            `format=json` (--format i3blocks). A line comes when the widget's next \
            entry comes due, on a reload, a relaunch, and when the host goes (an \
            "offline" line, class "offline") or comes back. Runs until stopped; an \
            on-demand widget with nothing to show yet is launched.
            """)

    @Argument(help: ArgumentHelp("The widget's name.", valueName: "NAME"))
    var name: String

    @Option(help: "text, json, waybar or i3blocks.")
    var format: WidgetLineFormat = .text

    @OptionGroup var group: GroupOptions

    func run() throws {
        let session = try WidgetWatchSession(group: try group.open(), name: name, format: format)
        switch session.run() {
        case .success(let code): if code != 0 { throw ExitCode(code) }
        case .failure(let error): throw error
        }
    }
}
