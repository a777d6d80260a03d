import ArgumentParser
import TetherIPC

struct Metrics: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "metrics",
        abstract: "Print the running host's metrics as Prometheus text.",
        discussion: """
            Extension launches, exits by reason, restarts and attaches; pushes and their latency; \
            requests by method and error; connections; dropped log lines; token refreshes by \
            outcome (from every process of the group); memory and CPU of the host and of each \
            running extension. The README lists every metric. Exits 1 with "host is not running" \
            when there is no host.
            """)

    @OptionGroup var group: GroupOptions

    func run() throws {
        let text = try group.host().metrics().text
        // The exposition ends with a newline; `output` adds its own.
        output(text.hasSuffix("\n") ? String(text.dropLast()) : text)
    }
}
