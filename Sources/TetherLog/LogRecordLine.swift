import Logging
import TetherJSON

/// A line an extension printed that is a log record of its own: a JSON
/// object with `level` and `message` (or hclog's `@level` and `@message`,
/// as go-plugin's plugins write them), which the host logs at that level
/// with the object's other fields as metadata. What the SDK's
/// `context.log` writes past a plain line.
package struct LogRecordLine: Sendable {
    package var level: Logger.Level
    package var message: String
    package var metadata: Logger.Metadata

    /// Fields kept as metadata, at most: a record is a line, not a dump.
    package static let maximumFields = 32
    /// Keys the reader sets itself (who printed it, and how); a line cannot
    /// claim them. The record's own time and level are not metadata.
    package static let reservedKeys: Set<String> = [
        "extension", "origin", "stream", "time", "level", "message", "event", "@level", "@message", "@timestamp",
    ]

    package init(level: Logger.Level, message: String, metadata: Logger.Metadata) {
        self.level = level
        self.message = message
        self.metadata = metadata
    }

    /// The record in `line`, or nil when it is an ordinary line.
    package init?(_ line: String) {
        guard line.utf8.first == UInt8(ascii: "{"),
              let value = try? JSONCodec.parse(Array(line.utf8)), case .object(let object) = value,
              let levelName = (object["level"] ?? object["@level"])?.stringValue,
              let level = Self.level(named: levelName),
              let message = (object["message"] ?? object["@message"])?.stringValue else {
            return nil
        }
        var metadata: Logger.Metadata = [:]
        for key in object.keys.sorted() where !Self.reservedKeys.contains(key) {
            guard metadata.count < Self.maximumFields, let value = object[key] else { break }
            metadata[key] = Self.metadataValue(value)
        }
        self.init(level: level, message: message, metadata: metadata)
    }

    /// swift-log's names, and the other spellings loggers use (hclog's
    /// `warn`, `fatal`...), in any case.
    package static func level(named name: String) -> Logger.Level? {
        let lowered = name.lowercased()
        if let level = Logger.Level(rawValue: lowered) { return level }
        switch lowered {
        case "warn": return .warning
        case "err": return .error
        case "fatal", "panic", "crit", "alert", "emerg": return .critical
        case "dbg": return .debug
        default: return nil
        }
    }

    static func metadataValue(_ value: JSONValue) -> Logger.MetadataValue {
        switch value {
        case .string(let text): .string(text)
        case .array(let values): .array(values.map(metadataValue))
        case .object(let values): .dictionary(values.mapValues(metadataValue))
        default: .stringConvertible(value)
        }
    }
}
