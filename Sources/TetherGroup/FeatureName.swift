/// A feature's name: `[a-z0-9][a-z0-9._-]{0,63}`. The rule keeps names safe
/// as file names (no '/', no leading '.', so no `..`) and readable in logs.
public struct FeatureName: Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String

    public init(_ rawValue: String) throws(GroupError) {
        guard Self.isValid(rawValue) else { throw .invalidFeatureName(rawValue) }
        self.rawValue = rawValue
    }

    public static func isValid(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...64).contains(bytes.count) else { return false }
        func isAlphanumeric(_ b: UInt8) -> Bool { (b >= 0x61 && b <= 0x7a) || (b >= 0x30 && b <= 0x39) }
        guard isAlphanumeric(bytes[0]) else { return false }
        return bytes.dropFirst().allSatisfy { isAlphanumeric($0) || $0 == 0x2e || $0 == 0x5f || $0 == 0x2d }
    }

    public var description: String { rawValue }
}
