import Foundation
import Testing
import TetherTestSupport

/// `tether new-extension` when its check fails: it puts back only what it
/// wrote, keeps Package.swift's mode whatever the umask, leaves an edit
/// another program made meanwhile alone (with the new sources its target
/// names) and says so; and a relative `--package-path` is read from the
/// working directory, through a symlink as the kernel resolves it. The failure is
/// made by a `swift` first on PATH that passes everything to the real one
/// but fails the check that reads the result back (the second
/// `dump-package`), after appending a line to Package.swift if told to.
@Suite(.timed) struct NewExtensionRecoveryTests {
    let scratch: TemporaryDirectory
    let package: String
    let original: String

    init() throws {
        scratch = try TemporaryDirectory("tether-new-ext")
        package = scratch.path + "/Consumer"
        original = """
            // swift-tools-version:6.0
            import PackageDescription
            let package = Package(
                name: "Consumer",
                dependencies: [.package(path: "\(Repository.root)")],
                targets: [
                    .executableTarget(name: "App"),
                ]
            )

            """
        try FileManager.default.createDirectory(atPath: package + "/Sources/App", withIntermediateDirectories: true)
        try writeFile(package + "/Package.swift", original, mode: 0o664)
        try writeFile(package + "/Sources/App/main.swift", "print(1)\n")
    }

    /// Runs `tether new-extension Late` under umask 077, with the failing
    /// `swift` first on PATH; `edit`: the line it appends before failing.
    func runWithAFailingCheck(edit: String?) throws -> CommandResult {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let real = try #require(path.split(separator: ":").map { "\($0)/swift" }.first { FileManager.default.isExecutableFile(atPath: $0) })
        let wrapper = scratch.path + "/bin"
        try FileManager.default.createDirectory(atPath: wrapper, withIntermediateDirectories: true)
        try writeFile(wrapper + "/swift", """
            #!/bin/sh
            case " $* " in
            *" dump-package "*)
                count=$(cat "$0.count" 2>/dev/null || echo 0); count=$((count + 1)); echo $count > "$0.count"
                if [ $count -ge 2 ]; then
                    [ -z "$EDIT" ] || printf '%s\\n' "$EDIT" >> "\(package)/Package.swift"
                    echo "error: the check fails here" >&2
                    exit 1
                fi ;;
            esac
            exec "\(real)" "$@"

            """, mode: 0o755)
        return try runCommand("/bin/sh", ["-c", "umask 077; exec \"$0\" new-extension Late --role widget --package-path \"$1\"",
                                          tetherExecutable, package],
                              environment: ["PATH": wrapper + ":" + path, "EDIT": edit ?? ""], timeout: 120)
    }

    func modeOfPackageSwift() throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: package + "/Package.swift")[.posixPermissions] as? Int)
    }

    @Test func whatItWroteIsPutBackWithItsMode() throws {
        let failed = try runWithAFailingCheck(edit: nil)
        #expect(failed.status == 1, "\(failed.stdout)\n\(failed.stderr)")
        #expect(failed.stderr.contains("Package.swift is as it was, and no Sources/Late is left"), "\(failed.stderr)")
        #expect(try String(contentsOfFile: package + "/Package.swift", encoding: .utf8) == original)
        #expect(try modeOfPackageSwift() == 0o664)
        #expect(!FileManager.default.fileExists(atPath: package + "/Sources/Late"))
    }

    @Test func anEditMadeMeanwhileIsLeftAloneAndSaid() throws {
        let failed = try runWithAFailingCheck(edit: "// an edit of the user's")
        #expect(failed.status == 1, "\(failed.stdout)\n\(failed.stderr)")
        #expect(failed.stderr.contains("Package.swift changed while this ran (by add-target or another program), so it and Sources/Late were left as they are"),
                "\(failed.stderr)")
        let now = try String(contentsOfFile: package + "/Package.swift", encoding: .utf8)
        #expect(now.hasSuffix("// an edit of the user's\n"), "\(now)")
        #expect(try modeOfPackageSwift() == 0o664)
        // The target it declares keeps its sources: the package still loads.
        #expect(FileManager.default.fileExists(atPath: package + "/Sources/Late/Late.swift"))
    }

    /// A package directory it cannot write in (Package.swift is replaced
    /// by a file made beside it) is refused before anything is edited; as
    /// root, run as nobody, whom the mode binds.
    @Test func aDirectoryItCannotWriteInIsRefusedFirst() throws {
        // Its scratch directory writable, as an earlier build leaves it:
        // only the package's own directory is shut.
        try FileManager.default.createDirectory(atPath: package + "/.build", withIntermediateDirectories: true)
        #expect(chmod(package + "/.build", 0o777) == 0)
        #expect(chmod(scratch.path, 0o755) == 0 && chmod(package, 0o555) == 0)
        defer { chmod(package, 0o755) }
        let command = [tetherExecutable, "new-extension", "Shut", "--role", "widget", "--package-path", package]
        let refused = getuid() == 0
            ? try runCommand("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups"] + command, timeout: 60)
            : try runCommand(command[0], Array(command.dropFirst()), timeout: 60)
        #expect(refused.status == 1, "\(refused.stdout)\n\(refused.stderr)")
        #expect(refused.stderr.contains("cannot write in \(package): Permission denied; nothing was written"), "\(refused.stderr)")
        #expect(try String(contentsOfFile: package + "/Package.swift", encoding: .utf8) == original)
        #expect(!FileManager.default.fileExists(atPath: package + "/Sources/Shut"))
    }

    @Test func aRelativePackagePathIsReadFromTheWorkingDirectory() throws {
        // `link/..` is the link's target's parent to the kernel, not this directory.
        try FileManager.default.createDirectory(atPath: scratch.path + "/elsewhere/inner", withIntermediateDirectories: true)
        #expect(symlink(scratch.path + "/elsewhere/inner", scratch.path + "/link") == 0)
        let made = try runCommand("/bin/sh", ["-c", "cd \"$1\" && exec \"$0\" new-extension Near --role widget --package-path link/../../Consumer/",
                                              tetherExecutable, scratch.path], timeout: 120)
        #expect(made.status == 0, "\(made.stdout)\n\(made.stderr)")
        #expect(FileManager.default.fileExists(atPath: package + "/Sources/Near/Near.extension.json"))
        #expect(try String(contentsOfFile: package + "/Package.swift", encoding: .utf8).contains(#"name: "Near""#))
    }
}
