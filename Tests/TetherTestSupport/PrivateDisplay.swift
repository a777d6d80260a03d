import Foundation

/// An X display of the test's own: `Xvfb -displayfd`, its cookie in an
/// Xauthority file of the test's, so nothing reaches the runner's display.
package final class PrivateDisplay: @unchecked Sendable {
    package let display: String
    package let xauthority: String
    private let server: TestProcess

    package init(in directory: String) throws {
        xauthority = directory + "/Xauthority"
        // The display's cookie: the server reads every cookie in the file
        // it is given; clients find theirs by display, added once known.
        let cookie = (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        guard try runCommand("/usr/bin/env", ["xauth", "-f", xauthority, "add", ":0", "MIT-MAGIC-COOKIE-1", cookie]).status == 0
        else { throw SpawnFailed(description: "xauth cannot write \(xauthority)") }
        // -noreset: a server resets when its last client goes, and a
        // client connecting meanwhile is refused ("Can't open display"):
        // 10 of 600 xdotool runs, one after another, on a loaded machine.
        server = try TestProcess("Xvfb", ["-displayfd", "1", "-auth", xauthority, "-nolisten", "tcp", "-noreset",
                                          "-screen", "0", "800x600x24"])
        guard let number = try server.readLine(timeout: 30), !number.isEmpty else {
            throw SpawnFailed(description: "Xvfb printed no display number")
        }
        display = ":" + number
        guard try runCommand("/usr/bin/env", ["xauth", "-f", xauthority, "add", display, "MIT-MAGIC-COOKIE-1", cookie]).status == 0
        else { throw SpawnFailed(description: "xauth cannot add \(display)") }
    }

    package func stopAlways() { server.stopAlways() }

    deinit { server.stopAlways() }
}
