/// A stable 16-character name for a path (FNV-1a, 64 bits, in hex): what
/// the host keeps for one group outside it is named by it, and each
/// group's entry in the secrets index.
package enum PathHash {
    package static func hex(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
