import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import TetherManifest

/// Collects manifests from files and directories. A bad manifest is reported
/// and skipped; the good ones are returned, so one mistake never keeps the
/// other extensions from running.
package enum ManifestLoader {
    package static let suffix = ".extension.json"

    package static func load(files: [String], directories: [String], searchPaths: [String] = [])
        -> (manifests: [ExtensionManifest], errors: [ManifestError]) {
        var paths = files
        var errors: [ManifestError] = []
        for directory in directories {
            do {
                let entries = try FileManager.default.contentsOfDirectory(atPath: directory)
                paths += entries.filter { $0.hasSuffix(suffix) }.sorted().map { directory + "/" + $0 }
            } catch {
                errors.append(ManifestError(file: directory, field: nil, problem: "cannot be listed"))
            }
        }
        var manifests: [ExtensionManifest] = []
        var names: [String: String] = [:]
        for path in paths {
            do {
                let manifest = try ExtensionManifest.load(path: path, searchPaths: searchPaths)
                if let first = names[manifest.name] {
                    errors.append(ManifestError(file: path, field: "name",
                                                problem: "'\(manifest.name)' is already used by \(first)"))
                    continue
                }
                names[manifest.name] = path
                manifests.append(manifest)
            } catch {
                errors.append(error)
            }
        }
        return (manifests, errors)
    }
}
