import Logging
import TetherJSON
#if canImport(Glibc)
import Glibc
#endif

/// How records are written: `text` is the message alone (with the
/// extension's name in brackets when it came from one), as a person reads
/// it at a terminal; `json` is one object per line with `time`, `level`,
/// `message` and the metadata, for a collector.
public enum LogFormat: String, Sendable, CaseIterable {
    case text
    case json

    func render(level: Logger.Level, message: String, metadata: Logger.Metadata) -> String {
        switch self {
        case .text:
            if case .string(let name)? = metadata["extension"], metadata["origin"] == "output" {
                return "[\(name)] \(message)"
            }
            return message
        case .json:
            var object: [String: JSONValue] = [:]
            for (key, value) in metadata { object[key] = Self.json(value) }
            object["time"] = .string(Self.timestamp())
            object["level"] = .string(level.rawValue)
            object["message"] = .string(message)
            return String(decoding: JSONCodec.serialize(.object(object)), as: UTF8.self)
        }
    }

    static func json(_ value: Logger.MetadataValue) -> JSONValue {
        switch value {
        case .string(let text): .string(text)
        case .stringConvertible(let value): .string(value.description)
        case .array(let values): .array(values.map(json))
        case .dictionary(let values): .object(values.mapValues(json))
        }
    }

    /// UTC, ISO 8601 with milliseconds, from the real-time clock.
    static func timestamp() -> String {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        var seconds = spec.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        let milliseconds = Int32(spec.tv_nsec / 1_000_000)
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(milliseconds, 3))Z"
    }
}
