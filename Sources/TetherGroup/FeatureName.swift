import TetherManifest

/// A feature's name: `[a-z0-9][a-z0-9._-]{0,63}`. The rule keeps names safe
/// as file names (no '/', no leading '.', so no `..`) and readable in logs.
public struct FeatureName: Sendable, Hashable, CustomStringConvertible {
    /// The name as given.
    public let rawValue: String

    /// Throws `GroupError.invalidFeatureName` for a name outside the rule.
    public init(_ rawValue: String) throws(GroupError) {
        guard Self.isValid(rawValue) else { throw .invalidFeatureName(rawValue) }
        self.rawValue = rawValue
    }

    /// Whether `name` follows the rule (`TetherName`, shared with extensions).
    public static func isValid(_ name: String) -> Bool { TetherName.isValid(name) }

    /// The name itself.
    public var description: String { rawValue }
}
