/// Any JSON value, Sendable, for JSON-RPC params and results. Hashable so
/// response ids can key the table of pending calls. Numbers keep 64-bit
/// integers exactly (`JSONNumber`).
public enum JSONValue: Sendable, Hashable, Codable, CustomStringConvertible {
    case null
    case bool(Bool)
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .number(JSONNumber(value))
        } else if let value = try? container.decode(UInt64.self) {
            self = .number(JSONNumber(value))
        } else if let value = try? container.decode(Double.self) {
            self = .number(JSONNumber(value))
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let number):
            switch number.storage {
            case .int64(let value): try container.encode(value)
            case .uint64(let value): try container.encode(value)
            case .double(let value):
                // Whole numbers go out without a fraction: ids and pids stay integers.
                if let integer = number.int64Value, value.magnitude < 9_007_199_254_740_992, !(value == 0 && value.sign == .minus) {
                    try container.encode(integer)
                } else {
                    try container.encode(value)
                }
            }
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The number as an `Int`, if it is a whole number in range.
    public var intValue: Int? {
        if case .number(let value) = self { return value.intValue }
        return nil
    }

    public var int64Value: Int64? {
        if case .number(let value) = self { return value.int64Value }
        return nil
    }

    public var uint64Value: UInt64? {
        if case .number(let value) = self { return value.uint64Value }
        return nil
    }

    public var numberValue: JSONNumber? {
        if case .number(let value) = self { return value }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// Any number as the nearest `Double` (integers above 2^53 round).
    public var doubleValue: Double? {
        if case .number(let value) = self { return value.doubleValue }
        return nil
    }

    /// An integer number, kept exactly.
    public static func integer(_ value: some BinaryInteger) -> JSONValue { .number(JSONNumber(value)) }

    /// A fractional number (or one that came from arithmetic on doubles).
    public static func double(_ value: Double) -> JSONValue { .number(JSONNumber(value)) }

    /// This object with `other`'s keys added or replaced; other values are
    /// returned unchanged.
    public func merging(_ other: [String: JSONValue]) -> JSONValue {
        guard case .object(var object) = self else { return self }
        object.merge(other) { _, new in new }
        return .object(object)
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The compact JSON text (keys sorted); never traps.
    public var description: String { String(decoding: JSONCodec.serialize(self), as: UTF8.self) }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral, ExpressibleByNilLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .number(JSONNumber(value)) }
    public init(floatLiteral value: Double) { self = .number(JSONNumber(value)) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { $1 }))
    }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(nilLiteral: ()) { self = .null }
}

extension JSONValue {
    /// True if no container in the value is nested deeper than `limit`
    /// levels (a top-level container is level 1). Stops at the limit, so a
    /// value built in code, however deep, costs at most `limit` levels.
    public func isNested(atMost limit: Int) -> Bool {
        switch self {
        case .array(let values):
            guard limit > 0 else { return false }
            return values.allSatisfy { $0.isNested(atMost: limit - 1) }
        case .object(let values):
            guard limit > 0 else { return false }
            return values.values.allSatisfy { $0.isNested(atMost: limit - 1) }
        default:
            return true
        }
    }
}
