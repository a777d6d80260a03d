import Logging
import TetherJSON
import TetherLoop

/// How records are written: `text` is the message alone (with the
/// extension's name in brackets when it came from one), as a person reads
/// it at a terminal; `json` is one object per line with `time`, `level`,
/// `message` and the metadata, for a collector.
public enum LogFormat: String, Sendable, CaseIterable {
    case text
    case json

    public func render(level: Logger.Level, message: String, metadata: Logger.Metadata) -> String {
        switch self {
        case .text:
            if case .string(let name)? = metadata["extension"], metadata["origin"] == "output" {
                return "[\(name)] \(message)"
            }
            return message
        case .json:
            var object: [String: JSONValue] = [:]
            for (key, value) in metadata { object[key] = Self.json(value) }
            object["time"] = .string(WallClock.iso8601())
            object["level"] = .string(level.rawValue)
            object["message"] = .string(message)
            return String(decoding: JSONCodec.serialize(.object(object)), as: UTF8.self)
        }
    }

    static func json(_ value: Logger.MetadataValue) -> JSONValue {
        switch value {
        case .string(let text): .string(text)
        // A number or a boolean stays one (the events' durations, counts).
        case .stringConvertible(let value): (value as? JSONValue) ?? .string(value.description)
        case .array(let values): .array(values.map(json))
        case .dictionary(let values): .object(values.mapValues(json))
        }
    }
}
