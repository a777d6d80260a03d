import Foundation

/// The built `tether` executable: next to the test bundle in the build
/// directory, or `$TETHER_EXECUTABLE`.
public let tetherExecutable: String = {
    if let explicit = ProcessInfo.processInfo.environment["TETHER_EXECUTABLE"] { return explicit }
    let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    return URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent("tether").path
}()

/// Runs `tether ARGS`.
public func tether(_ arguments: [String], environment: [String: String]? = nil, timeout: Double = 30) throws -> CommandResult {
    try runCommand(tetherExecutable, arguments, environment: environment, timeout: timeout)
}

/// Starts `tether ARGS` in the background.
public func startTether(_ arguments: [String], environment: [String: String]? = nil) throws -> TestProcess {
    try TestProcess(tetherExecutable, arguments, environment: environment)
}

/// A built example extension (`example-widget`, ...), next to `tether`.
public func exampleExecutable(_ name: String) -> String {
    URL(fileURLWithPath: tetherExecutable).deletingLastPathComponent().appendingPathComponent(name).path
}
