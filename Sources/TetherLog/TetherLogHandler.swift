import Logging
import TetherLoop

/// The swift-log handler of every Tether process: formats a record
/// (`LogFormat`), redacts secrets (`Redactor`), and writes it to standard
/// output, or to standard error from `errorLevel` up, through `LogOutput`,
/// which never traps and, on a loop, never blocks.
package struct TetherLogHandler: LogHandler {
    package var metadata: Logger.Metadata = [:]
    package var metadataProvider: Logger.MetadataProvider?
    package var logLevel: Logger.Level
    package let format: LogFormat
    package let errorLevel: Logger.Level
    let standardOutput: LogOutput
    let standardError: LogOutput
    /// nil only for a command's own result (`defaults get`, `token print`):
    /// the data the user asked for is printed as it is.
    let redactor: Redactor?

    package init(format: LogFormat = .text, logLevel: Logger.Level = .info, errorLevel: Logger.Level = .warning,
                 standardOutput: LogOutput = .standardOutput, standardError: LogOutput = .standardError,
                 redactor: Redactor? = .shared) {
        self.format = format
        self.logLevel = logLevel
        self.errorLevel = errorLevel
        self.standardOutput = standardOutput
        self.standardError = standardError
        self.redactor = redactor
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        let rendered = format.render(level: event.level, message: event.message.description, metadata: merged)
        let line = redactor?.redact(rendered) ?? rendered
        (event.level >= errorLevel ? standardError : standardOutput).write(line)
    }
}

extension Logger.Level {
    /// `TETHER_LOG_LEVEL`, in any case: what a command or an extension
    /// started by hand logs at (nil when unset or not a level).
    package static var fromEnvironment: Logger.Level? {
        ProcessEnvironment.value("TETHER_LOG_LEVEL").flatMap { Logger.Level(rawValue: $0.lowercased()) }
    }

    /// The names `--log-level` takes, as swift-log spells them.
    package static var names: String { allCases.map(\.rawValue).joined(separator: "|") }
}
