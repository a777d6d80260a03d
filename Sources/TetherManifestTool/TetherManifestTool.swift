#if canImport(Glibc)
import Glibc
#endif
import TetherJSON
import TetherManifest

/// The TetherManifest build plugin's tool: `TetherManifestTool MANIFEST
/// OUTPUT.swift` checks the manifest with the host's own rules (the
/// TetherManifest module; everything but the executable's existence, which
/// is built later) and writes Swift source that embeds it where the SDK
/// finds it with no code of the author's. A bad manifest fails the build
/// with one line naming the file and the field. It depends on the manifest
/// rules and JSON alone, so an extension author's build compiles nothing
/// of the host for it.
@main
enum TetherManifestTool {
    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        guard arguments.count == 2, let manifestPath = arguments.first, let outputPath = arguments.last else {
            fail("usage: TetherManifestTool MANIFEST.extension.json OUTPUT.swift")
        }
        guard let bytes = SourceFile.read(manifestPath) else { fail("error: \(manifestPath) cannot be read") }
        let manifest: ExtensionManifest
        do {
            manifest = try ExtensionManifest.parse(bytes, file: manifestPath)
        } catch {
            // "FILE: error: ..." is how compilers report, so SwiftPM and editors show it against the file.
            fail("\(manifestPath): error: invalid extension manifest: \(error.problemWithField)")
        }
        let json = String(decoding: JSONCodec.serialize(manifest.jsonValue), as: UTF8.self)
        let file = manifestPath.split(separator: "/").last.map(String.init) ?? manifestPath
        guard SourceFile.write(EmbeddedSource.text(json: json, file: file, manifest: manifest), to: outputPath) else {
            fail("error: cannot write \(outputPath): \(String(cString: strerror(errno)))")
        }
    }

    static func fail(_ message: String) -> Never {
        SourceFile.printError(message)
        exit(1)
    }
}

extension ManifestError {
    /// The problem without the file name, which the caller puts first.
    var problemWithField: String {
        field.map { "\"\($0)\" \(problem)" } ?? problem
    }
}
