import ArgumentParser
import Foundation
import TetherGroup
import TetherHost

struct HostCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "host",
        abstract: "Run the host: supervise extensions and serve features on the group's socket.",
        discussion: """
            Holds the host lock (a second host on the same group exits 1), listens on \
            DIR/host.sock, starts each extension from its manifest, prefixes their output \
            with their names and restarts them by their policy. Prints one readiness line \
            and sends READY=1 to $NOTIFY_SOCKET when set (systemd Type=notify). SIGINT or \
            SIGTERM stops everything cleanly and exits 0.
            """
    )

    @OptionGroup var group: GroupOptions

    @Option(name: .customLong("extension"), help: ArgumentHelp("An extension manifest (*.extension.json); repeatable.",
                                                               valueName: "MANIFEST"))
    var manifests: [String] = []

    @Option(help: ArgumentHelp("Load every *.extension.json in DIR.", valueName: "DIR"))
    var extensionsDir: [String] = []

    @Option(help: ArgumentHelp("Seconds an extension gets to exit after SIGTERM before SIGKILL.", valueName: "SECONDS"))
    var grace = Seconds(3)

    func run() throws {
        let directory = try group.open()
        // A bare executable name in a manifest is looked up next to tether, then on $PATH.
        let ownDirectory = (ownExecutable() as NSString).deletingLastPathComponent
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        let (loaded, errors) = ManifestLoader.load(files: manifests, directories: extensionsDir,
                                                   searchPaths: [ownDirectory] + path)
        for error in errors { printError("skipping \(error)") }
        let session = try HostSession(group: directory, manifests: loaded, grace: grace)
        switch session.run() {
        case .success(let code): if code != 0 { throw ExitCode(code) }
        case .failure(let error): throw error
        }
    }
}
