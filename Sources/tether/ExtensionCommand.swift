import ArgumentParser
import TetherIPC
import TetherJSON

struct ExtensionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "extension",
        abstract: "Start, stop or list the host's extensions.",
        discussion: """
            'start' launches an extension of the host's manifests (an on-demand one that is idle, or one \
            stopped or failed) and waits for it to attach; 'stop' ends it with everything it started. \
            Without a host: exit 1, "host is not running".
            """,
        subcommands: [Start.self, Stop.self, List.self]
    )

    /// NAME and --group: the extension a command acts on.
    struct Target: ParsableArguments {
        @Argument(help: ArgumentHelp("The extension's name, as in its manifest.", valueName: "NAME")) var name: String
        @OptionGroup var group: GroupOptions
    }

    struct Start: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "start", abstract: "Launch an extension and wait for it to attach.")
        @OptionGroup var target: Target

        func run() throws {
            let name = target.name, result = try target.group.host().startExtension(name)
            let pid = result.pid.map { " (pid \($0))" } ?? ""
            output(result.attached == true ? "\(name) attached\(pid)"
                   : "\(name) started\(pid), not attached yet")
        }
    }

    struct Stop: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "stop", abstract: "End an extension the host started.")
        @OptionGroup var target: Target

        func run() throws {
            let name = target.name, result = try target.group.host().stopExtension(name)
            output(result.stopped ? "\(name) stopped" : "\(name) was not running (\(result.state))")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the extensions: state, pid, restarts, last exit.")
        @OptionGroup var group: GroupOptions
        @Flag(help: "Print one JSON object: {\"extensions\": [...]}, each as in 'tether status --json'.") var json = false

        func run() throws {
            let listing = try group.host().extensions()
            try printList(listing.extensions, wire: listing.wire, as: "extensions", json: json, empty: "no extensions",
                          line: ExtensionLine.text)
        }
    }
}

/// One extension of `status` or `extension list`, as one line of text.
enum ExtensionLine {
    static func text(_ item: ExtensionStatus) -> String {
        let pid = item.pid.map { "pid \($0)" } ?? "-"
        var line = "\(item.name)  \(item.role)  \(item.state ?? "?")  \(pid)  restarts \(item.restarts ?? 0)"
        if let last = item.lastExit, case .object = last {
            let how = last["signal"]?.intValue.map { "signal \($0)" } ?? "code \(last["code"]?.intValue ?? 0)"
            line += "  last exit: \(last["reason"]?.stringValue ?? "?") (\(how)) at \(last["at"]?.stringValue ?? "?")"
        }
        if let dropped = item.droppedLines, dropped > 0 { line += "  dropped lines \(dropped)" }
        // What a peer named or reported stays on this line, shown as escapes.
        return PrintableText.escaped(line)
    }
}
