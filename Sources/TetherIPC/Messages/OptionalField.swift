import TetherJSON
import TetherRPC

/// A request's optional field, read strictly: absent or null is nil; there
/// with another type (or out of its range) is the client's error (-32602)
/// that names it, never a value silently taken for absent.
extension Optional where Wrapped == JSONValue {
    func optional<Value>(_ field: String, must expected: String,
                         _ read: (JSONValue) -> Value?) throws(RPCError) -> Value? {
        guard let value = self?[field], value != .null else { return nil }
        guard let typed = read(value) else { throw .invalidParams("\"\(field)\" must be \(expected)") }
        return typed
    }

    /// A list of strings, or nil when absent.
    func optionalStrings(_ field: String) throws(RPCError) -> [String]? {
        try optional(field, must: "an array of strings") { value in
            guard let members = value.arrayValue else { return nil }
            let strings = members.compactMap(\.stringValue)
            return strings.count == members.count ? strings : nil
        }
    }
}
