/// The one rule for the names Tether turns into file names (a feature's, an
/// extension's): `[a-z0-9][a-z0-9._-]{0,63}`. No '/', no leading '.' (so no
/// `..`), nothing a log would need to escape. It lives here, the lowest
/// module both the manifest's check and the group directory see.
package enum TetherName {
    /// Whether `name` follows the rule.
    package static func isValid(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...64).contains(bytes.count) else { return false }
        func isAlphanumeric(_ b: UInt8) -> Bool { (b >= 0x61 && b <= 0x7a) || (b >= 0x30 && b <= 0x39) }
        guard isAlphanumeric(bytes[0]) else { return false }
        return bytes.dropFirst().allSatisfy { isAlphanumeric($0) || $0 == 0x2e || $0 == 0x5f || $0 == 0x2d }
    }
}
