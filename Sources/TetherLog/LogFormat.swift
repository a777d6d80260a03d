import Logging
import TetherJSON
import TetherLoop

/// How records are written: `text` is the message alone (with the
/// extension's name in brackets when it came from one), as a person reads
/// it at a terminal; `json` is one object per line with `time`, `level`,
/// `message` and the metadata, for a collector.
package enum LogFormat: String, Sendable, CaseIterable {
    case text
    case json

    package func render(level: Logger.Level, message: String, metadata: Logger.Metadata) -> String {
        switch self {
        case .text:
            if case .string(let name)? = metadata["extension"], metadata["origin"] == "output" {
                // An extension's line stays one line, whatever its record
                // held (no forged host lines), with its record's fields after.
                var line = "[\(name)] \(Self.oneLine(message))"
                for (key, value) in metadata.sorted(by: { $0.key < $1.key }) where !Self.readersKeys.contains(key) {
                    line += " \(Self.oneLine(key))=\(Self.oneLine(value.description))"
                }
                return line
            }
            // The host's own sentences quote what others sent (a manifest's
            // value, a peer's name): escaped too, so no line is forged.
            return Self.oneLine(message)
        case .json:
            var object: [String: JSONValue] = [:]
            for (key, value) in metadata { object[key] = Self.json(value) }
            object["time"] = .string(WallClock.iso8601())
            object["level"] = .string(level.rawValue)
            object["message"] = .string(message)
            return String(decoding: JSONCodec.serialize(.object(object)), as: UTF8.self)
        }
    }

    /// What the host adds to an extension's line: not shown again.
    static let readersKeys: Set<String> = ["extension", "origin", "stream"]

    /// Line breaks, control characters and the rest `PrintableText` names, as escapes.
    static func oneLine(_ text: String) -> String { PrintableText.escaped(text) }

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
