/// Any JSON value, Sendable, for JSON-RPC params and results. Hashable so
/// response ids can key the table of pending calls.
public enum JSONValue: Sendable, Hashable, Codable, CustomStringConvertible {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
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
        case .number(let value):
            // Whole numbers go out without a fraction: ids and pids stay integers.
            if value.rounded() == value, abs(value) < 1e15 { try container.encode(Int64(value)) } else { try container.encode(value) }
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

    public var intValue: Int? {
        if case .number(let value) = self, value.rounded() == value, abs(value) < 1e15 { return Int(value) }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    public var doubleValue: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

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

    public var description: String {
        switch self {
        case .null: "null"
        case .bool(let value): "\(value)"
        case .number(let value): value.rounded() == value ? "\(Int64(value))" : "\(value)"
        case .string(let value): "\"\(value)\""
        case .array(let value): "[\(value.map(\.description).joined(separator: ","))]"
        case .object(let value): "{\(value.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ","))}"
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral, ExpressibleByNilLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
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
