import TetherLog
import ArgumentParser
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import TetherIPC
import TetherJSON

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the running host: pid, uptime, extensions and features.",
        discussion: "Exits 1 with \"host is not running\" when there is no host.")

    @OptionGroup var group: GroupOptions
    @Flag(help: "Print one JSON object: pid, since, uptime, group, socket, extensions, features, desktopNotifications.")
    var json = false

    func run() throws {
        let answer = try group.host().status()
        if json { return try printJSON(answer) }
        let status = HostStatus(json: answer)
        output("host: running, pid \(status.pid), up \(TextFormat.fixed(status.uptime, 1)) s, group \(status.group)")
        output(status.extensions.isEmpty ? "extensions: none" : "extensions:")
        for item in status.extensions { output("  " + ExtensionLine.text(item)) }
        let features = status.features
        output(PrintableText.escaped("features: " + (features.isEmpty ? "none" : features.joined(separator: ", "))))
        output(PrintableText.escaped(status.desktopNotifications.text))
        output(PrintableText.escaped(status.inputMethod.text))
    }
}
