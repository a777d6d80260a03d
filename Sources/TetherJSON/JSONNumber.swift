/// A JSON number, kept as exactly as it was written: an integer that fits
/// `Int64` or `UInt64` stays that integer (an order id, a JSON-RPC id, a
/// timestamp in nanoseconds), anything else is the nearest `Double`.
///
/// Equality is by value, so `1`, `1.0` and `1e0` are equal and hash alike;
/// the text written back is the one the value was read as.
public struct JSONNumber: Sendable, Hashable, CustomStringConvertible {
    public enum Storage: Sendable {
        case int64(Int64)
        /// Only for integers above `Int64.max`.
        case uint64(UInt64)
        case double(Double)
    }

    public let storage: Storage

    public init(_ value: Int64) { storage = .int64(value) }

    public init(_ value: UInt64) {
        storage = value <= UInt64(Int64.max) ? .int64(Int64(value)) : .uint64(value)
    }

    public init(_ value: some BinaryInteger) {
        if let small = Int64(exactly: value) {
            storage = .int64(small)
        } else if let large = UInt64(exactly: value) {
            storage = .uint64(large)
        } else {
            storage = .double(Double(value))
        }
    }

    public init(_ value: Double) { storage = .double(value) }

    /// The value as an `Int64`, if it is a whole number in range.
    public var int64Value: Int64? {
        switch storage {
        case .int64(let value): value
        case .uint64: nil
        case .double(let value): Int64(exactly: value)
        }
    }

    /// The value as a `UInt64`, if it is a whole number in range.
    public var uint64Value: UInt64? {
        switch storage {
        case .int64(let value): UInt64(exactly: value)
        case .uint64(let value): value
        case .double(let value): UInt64(exactly: value)
        }
    }

    public var intValue: Int? { int64Value.flatMap { Int(exactly: $0) } }

    /// The nearest `Double` (integers above 2^53 round).
    public var doubleValue: Double {
        switch storage {
        case .int64(let value): Double(value)
        case .uint64(let value): Double(value)
        case .double(let value): value
        }
    }

    /// True for a number read or made as an integer (no fraction, no exponent).
    public var isInteger: Bool {
        if case .double = storage { return false }
        return true
    }

    public static func == (lhs: JSONNumber, rhs: JSONNumber) -> Bool {
        switch (lhs.storage, rhs.storage) {
        case (.int64(let left), .int64(let right)): left == right
        case (.uint64(let left), .uint64(let right)): left == right
        case (.int64, .uint64), (.uint64, .int64): false
        case (.double(let left), .double(let right)): left == right
        case (.double(let value), .int64(let integer)), (.int64(let integer), .double(let value)):
            Int64(exactly: value) == integer
        case (.double(let value), .uint64(let integer)), (.uint64(let integer), .double(let value)):
            UInt64(exactly: value) == integer
        }
    }

    public func hash(into hasher: inout Hasher) {
        // Equal values hash alike whatever their storage: whole numbers by
        // their integer, others by their Double (where 0 and -0 agree).
        if let value = int64Value {
            hasher.combine(0 as UInt8)
            hasher.combine(value)
        } else if let value = uint64Value {
            hasher.combine(1 as UInt8)
            hasher.combine(value)
        } else {
            hasher.combine(2 as UInt8)
            hasher.combine(doubleValue)
        }
    }

    /// The JSON text: integers exactly, whole doubles below 2^53 without a
    /// fraction (ids and pids stay integers), -0 as `-0`, other doubles in
    /// their shortest round-trip form, and a non-finite double as `null`.
    public var description: String {
        switch storage {
        case .int64(let value): return String(value)
        case .uint64(let value): return String(value)
        case .double(let value):
            guard value.isFinite else { return "null" }
            if value == 0 { return value.sign == .minus ? "-0" : "0" }
            if value.rounded() == value, value.magnitude < 9_007_199_254_740_992, let integer = Int64(exactly: value) {
                return String(integer)
            }
            return value.description
        }
    }
}

extension JSONNumber: ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral {
    public init(integerLiteral value: Int64) { self.init(value) }
    public init(floatLiteral value: Double) { self.init(value) }
}
