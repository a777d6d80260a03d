/// base64url (RFC 4648 §5) without padding, as JWTs use it (RFC 7515 §2 and
/// appendix C). Padding is accepted when present; anything else outside the
/// alphabet is refused.
package enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xff, count: 256)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        return table
    }()

    package static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            var word: UInt32 = 0
            for (offset, byte) in chunk.enumerated() { word |= UInt32(byte) << (16 - 8 * offset) }
            for sextet in 0..<(chunk.count + 1) { output.append(alphabet[Int((word >> (18 - 6 * sextet)) & 0x3f)]) }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Standard base64 with padding (RFC 4648 §4), as HTTP Basic wants it.
    package static func encodeStandard(_ bytes: [UInt8]) -> String {
        var text = String(encode(bytes).map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
        while text.utf8.count % 4 != 0 { text += "=" }
        return text
    }

    /// The decoded bytes, or nil when `text` is not base64url.
    package static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var input = Array(text.utf8)
        while input.last == UInt8(ascii: "=") { input.removeLast() }
        guard input.count % 4 != 1 else { return nil }  // a lone sextet cannot end a group
        var output: [UInt8] = []
        output.reserveCapacity(input.count * 3 / 4)
        var word: UInt32 = 0
        var bits = 0
        for byte in input {
            let value = values[Int(byte)]
            guard value != 0xff else { return nil }
            word = (word << 6) | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8((word >> UInt32(bits)) & 0xff))
            }
        }
        return output
    }
}
