import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An executable of a package nested in this repository (the demo auth
/// server): `.ci/run` builds it before the tests; a test run without it
/// builds it once, under a lock, so `swift test` alone works too.
package struct NestedPackageBuild: Sendable {
    package static let demoAuthServer = NestedPackageBuild(package: "examples/DemoAuthServer", product: "demo-auth-server")

    /// Relative to the repository.
    package let package: String
    package let product: String
    package var executable: String { "\(Repository.root)/\(package)/.build/debug/\(product)" }

    /// The built executable, built first if need be.
    package func path() throws -> String {
        if FileManager.default.isExecutableFile(atPath: executable) { return executable }
        // Beside the built tether, as the Python environment's lock.
        let lock = URL(fileURLWithPath: tetherExecutable).deletingLastPathComponent().path + "/\(product)-build.lock"
        let lockFD = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard lockFD >= 0 else { throw SpawnFailed(description: "cannot open \(lock): errno \(errno)") }
        defer { close(lockFD) }
        while flock(lockFD, LOCK_EX) != 0 {
            guard errno == EINTR else { throw SpawnFailed(description: "cannot lock \(lock): errno \(errno)") }
        }
        defer { flock(lockFD, LOCK_UN) }
        if FileManager.default.isExecutableFile(atPath: executable) { return executable }
        let directory = "\(Repository.root)/\(package)"
        // SwiftPM leaves files in the temp folder: in one of ours, removed.
        let temporary = try TemporaryDirectory("tether-swift-build")
        let built = try runCommand("/usr/bin/env", ["swift", "build", "--package-path", directory],
                                   environment: ["TMPDIR": temporary.path], timeout: 1_500)
        guard built.status == 0, FileManager.default.isExecutableFile(atPath: executable) else {
            throw SpawnFailed(description: "swift build --package-path \(directory) failed: \(built.stderr.suffix(2_000))")
        }
        return executable
    }
}
