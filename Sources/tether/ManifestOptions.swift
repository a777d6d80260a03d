import ArgumentParser
import TetherHost
import TetherLoop
import TetherManifest

/// `--extension MANIFEST …` and `--extensions-dir DIR …`, loaded as the host
/// loads them (`host`, `doctor`).
struct ManifestOptions: ParsableArguments {
    @Option(name: .customLong("extension"), help: ArgumentHelp("An extension manifest (*.extension.json); repeatable.",
                                                               valueName: "MANIFEST"))
    var files: [String] = []

    @Option(help: ArgumentHelp("Load every *.extension.json in DIR.", valueName: "DIR"))
    var extensionsDir: [String] = []

    /// A bare executable name in a manifest is looked up next to tether, then on $PATH.
    func load() -> (manifests: [ExtensionManifest], errors: [ManifestError]) {
        let path = (ProcessEnvironment.value("PATH") ?? "").split(separator: ":").map(String.init)
        return ManifestLoader.load(files: files, directories: extensionsDir,
                                   searchPaths: [directoryName(ownExecutable())] + path)
    }
}
