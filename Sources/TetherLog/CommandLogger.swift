import Logging
import TetherLoop

extension Logger {
    /// Where a command (not the host) tells its events (`auth.refresh.*`...):
    /// standard error, and only when `TETHER_LOG_LEVEL` asks for them, since
    /// a command's output is its result and its error one sentence.
    /// `TETHER_LOG_FORMAT=json` writes one object per line.
    package static func command(label: String) -> Logger {
        let format = ProcessEnvironment.value("TETHER_LOG_FORMAT").flatMap { LogFormat(rawValue: $0.lowercased()) } ?? .text
        guard let level = Logger.Level.fromEnvironment else { return Logger(label: label) { _ in SwiftLogNoOpLogHandler() } }
        return Logger(label: label) { _ in TetherLogHandler(format: format, logLevel: level, errorLevel: .trace) }
    }
}
