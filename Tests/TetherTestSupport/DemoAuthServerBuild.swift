import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The demo auth server, a package of its own (examples/DemoAuthServer):
/// `.ci/run` builds it before the tests; a test run without it builds it
/// once, under a lock, so `swift test` alone works too.
public enum DemoAuthServerBuild {
    public static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path
    public static let package = repository + "/examples/DemoAuthServer"
    public static let executable = package + "/.build/debug/demo-auth-server"

    /// The built executable, built first if need be.
    public static func path() throws -> String {
        if FileManager.default.isExecutableFile(atPath: executable) { return executable }
        // Beside the built tether, as the Python environment's lock.
        let lock = URL(fileURLWithPath: tetherExecutable).deletingLastPathComponent().path + "/demo-auth-server-build.lock"
        let lockFD = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard lockFD >= 0 else { throw SpawnFailed(description: "cannot open \(lock): errno \(errno)") }
        defer { close(lockFD) }
        while flock(lockFD, LOCK_EX) != 0 {
            guard errno == EINTR else { throw SpawnFailed(description: "cannot lock \(lock): errno \(errno)") }
        }
        defer { flock(lockFD, LOCK_UN) }
        if FileManager.default.isExecutableFile(atPath: executable) { return executable }
        let built = try runCommand("/usr/bin/env", ["swift", "build", "--package-path", package], timeout: 1_500)
        guard built.status == 0, FileManager.default.isExecutableFile(atPath: executable) else {
            throw SpawnFailed(description: "swift build --package-path \(package) failed: \(built.stderr.suffix(2_000))")
        }
        return executable
    }
}
