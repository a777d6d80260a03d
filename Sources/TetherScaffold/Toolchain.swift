#if canImport(Glibc)
import Glibc
#endif
import TetherLoop

/// `swift package` on the author's package, always with a scratch
/// directory of its own: the new-extension plugin runs while SwiftPM holds
/// the package's build directory, and these commands only read and edit
/// the manifest.
struct Toolchain {
    let swift: String
    let packagePath: String
    let scratchPath: String

    func package(_ arguments: [String]) throws(ScaffoldError) -> CommandOutput {
        let output: CommandOutput
        do {
            // SwiftPM leaves a TemporaryDirectory.* and lock files in the
            // temp folder at every run: in our scratch instead, not in /tmp.
            let temporary = scratchPath + "/tmp"
            for directory in [directoryName(scratchPath), scratchPath, temporary] where mkdir(directory, 0o755) != 0 && errno != EEXIST {
                throw ScaffoldError("cannot create \(directory): \(String(cString: strerror(errno)))")
            }
            output = try CommandOutput.run(swift, ["package", "--package-path", packagePath, "--scratch-path", scratchPath]
                                           + arguments, environment: ProcessEnvironment.entries(setting: "TMPDIR", to: temporary))
        } catch let error as ScaffoldError {
            throw error
        } catch {
            throw ScaffoldError("cannot run \(swift): \(error) (is the Swift toolchain on PATH?)")
        }
        return output
    }

    /// The package as SwiftPM reads it.
    func describe() throws(ScaffoldError) -> PackageDescriptionDump {
        let output = try package(["dump-package"])
        guard output.status == .exited(0), let dump = PackageDescriptionDump(output.standardOutput) else {
            throw ScaffoldError("swift package dump-package failed: \(Self.firstLine(output.errorText))")
        }
        return dump
    }

    /// The first error line of a toolchain's output, without the compiler
    /// command SwiftPM appends to a manifest that does not compile.
    static func firstLine(_ text: String) -> String {
        let line = text.split(separator: "\n").first { $0.contains("error") } ?? text.split(separator: "\n").first ?? ""
        let reason = line.firstRange(of: " (compiled with:").map { line[..<$0.lowerBound] } ?? line
        return reason.isEmpty ? "no reason given" : String(reason)
    }
}

/// Why nothing (or only what is named) was changed, in one sentence.
package struct ScaffoldError: Error, Sendable, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}

/// The directory part of `path`.
private func directoryName(_ path: String) -> String {
    path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
}
