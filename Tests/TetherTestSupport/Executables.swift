import Foundation

/// The built `tether` executable: next to the test bundle in the build
/// directory, or `$TETHER_EXECUTABLE`.
package let tetherExecutable: String = {
    if let explicit = ProcessInfo.processInfo.environment["TETHER_EXECUTABLE"] { return explicit }
    let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    return URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent("tether").path
}()

/// Runs `tether ARGS`.
package func tether(_ arguments: [String], environment: [String: String]? = nil, timeout: Double = 30) throws -> CommandResult {
    try runCommand(tetherExecutable, arguments, environment: environment, timeout: timeout)
}

/// Starts `tether ARGS` in the background.
package func startTether(_ arguments: [String], environment: [String: String]? = nil) throws -> TestProcess {
    try TestProcess(tetherExecutable, arguments, environment: environment)
}

/// A built example extension (`example-widget`, ...) or benchmark
/// (`tether-bench-storm`), next to `tether`.
package func exampleExecutable(_ name: String) -> String {
    URL(fileURLWithPath: tetherExecutable).deletingLastPathComponent().appendingPathComponent(name).path
}
