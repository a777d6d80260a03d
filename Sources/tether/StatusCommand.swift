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
        discussion: """
            Also whether pushes are shown on the desktop, whether the keyboards are input methods, and \
            whether extensions run in cgroups of their own (where not, why and the fix). Exits 1 with \
            "host is not running" when there is no host.
            """)

    @OptionGroup var group: GroupOptions
    @Flag(help: "Print one JSON object: pid, since, uptime, group, socket, extensions, extensionCount, features, desktopNotifications, inputMethod, cgroups.")
    var json = false
    @Option(help: ArgumentHelp("List at most N extensions (all are counted): a status bar's poll of a host running thousands stays cheap.",
                               valueName: "N"))
    var limit: Int?
    @Option(help: ArgumentHelp("Seconds to wait for the host's answer: a host its socket starts on a slow machine may take longer.",
                               valueName: "SECONDS"))
    var timeout = HostClient.defaultTimeout

    func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit must be 0 or more.") }
        if timeout.value <= 0 { throw ValidationError("--timeout must be more than 0 seconds.") }
    }

    func run() throws {
        let answer = try group.host().status(limit: limit, timeout: timeout)
        if json { return try printJSON(answer) }
        let status = HostStatus(json: answer)
        output(PrintableText.escaped("host: running, pid \(status.pid), up \(TextFormat.fixed(status.uptime, 1)) s, group \(status.group)"))
        output(status.extensionCount == 0 ? "extensions: none" : "extensions:")
        for item in status.extensions { output("  " + ExtensionLine.text(item)) }
        let unlisted = status.extensionCount - status.extensions.count
        if unlisted > 0 { output("  and \(unlisted) more (without --limit: all of them)") }
        let features = status.features
        output(PrintableText.escaped("features: " + (features.isEmpty ? "none" : features.joined(separator: ", "))))
        output(PrintableText.escaped(status.desktopNotifications.text))
        output(PrintableText.escaped(status.inputMethod.text))
        if let cgroups = status.cgroups { output(PrintableText.escaped(cgroups.text)) }
    }
}
