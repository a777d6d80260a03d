import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import SystemPackage
import TetherGroup
import TetherManifest

extension ExtensionManifest {
    /// Reads and checks the manifest at `path`. Every error names the file
    /// and, where there is one, the field.
    ///
    /// `executable` is absolute or relative to the manifest. A bare name
    /// (no slash) that is not next to the manifest is looked up in
    /// `searchPaths` (the host passes its own directory, then `$PATH`), so
    /// one manifest works for debug, release and installed builds.
    package static func load(path: String, searchPaths: [String] = []) throws(ManifestError) -> ExtensionManifest {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ManifestError(file: path, field: nil, problem: "cannot be read")
        }
        var manifest = try parse(Array(data), file: path)
        // Relative to a working directory that cannot be read, the paths
        // would name other files once a launch changes directory.
        let source: String
        do throws(Errno) {
            source = try absolutePath(resolving: path)
        } catch {
            throw ManifestError(file: path, field: nil, problem: "cannot be placed: the working directory cannot be read (\(error))")
        }
        let executableText = manifest.executable
        let directory = FilePath(source).removingLastComponent().string
        var executable = executableText.hasPrefix("/")
            ? executableText : FilePath(directory).appending(executableText).string
        if !executableText.contains("/"), !FileManager.default.isExecutableFile(atPath: executable),
           let found = searchPaths.lazy.map({ FilePath($0).appending(executableText).string })
               .first(where: { FileManager.default.isExecutableFile(atPath: $0) }) {
            executable = found
        }
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw ManifestError(file: path, field: "executable", problem: "\(executable) is missing or not executable")
        }
        manifest.executable = executable
        manifest.source = source
        return manifest
    }

}
