/// One D-Bus value, as a message carries it: what TetherBus appends and
/// reads, so callers build and take apart messages without sd-bus's
/// variadic calls. Unix descriptors are neither sent nor taken.
package indirect enum BusValue: Sendable, Equatable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    /// Items of one type, `element` its signature ("s", "{sv}", "(ss)").
    case array(element: String, [BusValue])
    case structure([BusValue])
    case variant(BusValue)
    /// A dictionary's entry: only as an array's item.
    case entry(BusValue, BusValue)

    /// The value's D-Bus type signature.
    package var signature: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .array(let element, _): "a" + element
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        case .variant: "v"
        case .entry(let key, let value): "{" + key.signature + value.signature + "}"
        }
    }

    /// A dictionary of strings to variants (`a{sv}`), the common property bag.
    package static func properties(_ pairs: [(String, BusValue)]) -> BusValue {
        .array(element: "{sv}", pairs.map { .entry(.string($0.0), .variant($0.1)) })
    }

    package var stringValue: String? {
        switch self {
        case .string(let text), .objectPath(let text), .signature(let text): text
        default: nil
        }
    }

    package var uint32Value: UInt32? {
        if case .uint32(let number) = self { return number }
        return nil
    }

    package var int32Value: Int32? {
        if case .int32(let number) = self { return number }
        return nil
    }

    package var boolValue: Bool? {
        if case .boolean(let flag) = self { return flag }
        return nil
    }

    /// The value inside a variant (itself for anything else).
    package var unwrapped: BusValue {
        if case .variant(let inner) = self { return inner.unwrapped }
        return self
    }

    package var fields: [BusValue]? {
        if case .structure(let fields) = self { return fields }
        return nil
    }

    package var items: [BusValue]? {
        if case .array(_, let items) = self { return items }
        return nil
    }

    /// An `a{s…}` array's entry for `key`.
    package subscript(key: String) -> BusValue? {
        guard case .array(_, let items) = self else { return nil }
        for case .entry(.string(key), let value) in items { return value }
        return nil
    }
}
