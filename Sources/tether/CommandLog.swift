import Logging
import TetherLog
import TetherLoop

/// Where a command other than `tether host` tells its events
/// (`auth.login.success`, `auth.refresh.*`...): standard error, and only
/// when `TETHER_LOG_LEVEL` asks for them, since a command's output is its
/// result and its error one sentence. `TETHER_LOG_FORMAT=json` writes one
/// object per line. (The host strips `TETHER_*` from its children.)
enum CommandLog {
    static let logger: Logger = {
        let level = Logger.Level.fromEnvironment
        let format = ProcessEnvironment.value("TETHER_LOG_FORMAT").flatMap { LogFormat(rawValue: $0.lowercased()) } ?? .text
        guard let level else { return Logger(label: "tether.command") { _ in SwiftLogNoOpLogHandler() } }
        return Logger(label: "tether.command") { _ in
            TetherLogHandler(format: format, logLevel: level, errorLevel: .trace)
        }
    }()
}
