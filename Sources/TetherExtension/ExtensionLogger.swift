import Logging
import TetherLog
#if canImport(Glibc)
import Glibc
#endif

/// The logger behind `context.log`'s records and the SDK's events: its
/// records go to standard error, one JSON object per line (`level`,
/// `message`, `time` and the metadata), which a host turns into records of
/// its own at the same level under the extension's name. At a terminal
/// (started by hand) they are plain lines. Never traps, never blocks the
/// loop (the SDK's output is non-blocking and bounded).
enum ExtensionLogger {
    static func make(name: String) -> Logger {
        let format: LogFormat = isatty(STDERR_FILENO) == 1 ? .text : .json
        // TETHER_LOG_LEVEL when started by hand (a host does not pass it on).
        let level = Logger.Level.fromEnvironment ?? .info
        var logger = Logger(label: "tether.extension.\(name)") { _ in
            TetherLogHandler(format: format, logLevel: level, errorLevel: .trace)
        }
        logger.logLevel = level
        return logger
    }
}
