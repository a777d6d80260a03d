/// D-Bus's wire format, little-endian, as far as `ScriptedBus` needs it:
/// a message's header fields, and bodies of strings, numbers and variants.
/// Alignment is from the message's start; a body starts 8-aligned.
package enum Wire {
    package enum Field {
        case string(String), objectPath(String), signature(String), uint32(UInt32)
    }

    /// REPLY_SERIAL and DESTINATION.
    package static func reply(to serial: UInt32, destination: String) -> [(UInt8, Field)] {
        [(5, .uint32(serial)), (6, .string(destination))]
    }

    package static func message(type: UInt8, serial: UInt32, fields: [(UInt8, Field)], body: [UInt8]) -> [UInt8] {
        var array: [UInt8] = []
        // The array's items begin at offset 16.
        func pad(_ alignment: Int) { while (16 + array.count) % alignment != 0 { array.append(0) } }
        for (code, value) in fields {
            pad(8)
            array.append(code)
            func text(_ type: Unicode.Scalar, _ text: String) {
                array += [1, UInt8(ascii: type), 0]
                pad(4)
                array += le32(UInt32(text.utf8.count)) + Array(text.utf8) + [0]
            }
            switch value {
            case .string(let value): text("s", value)
            case .objectPath(let value): text("o", value)
            case .signature(let text):
                array += [1, UInt8(ascii: "g"), 0, UInt8(text.utf8.count)] + Array(text.utf8) + [0]
            case .uint32(let number):
                array += [1, UInt8(ascii: "u"), 0]
                pad(4)
                array += le32(number)
            }
        }
        var header: [UInt8] = [UInt8(ascii: "l"), type, 0, 1] + le32(UInt32(body.count)) + le32(serial)
            + le32(UInt32(array.count)) + array
        while header.count % 8 != 0 { header.append(0) }
        return header + body
    }

    /// A body's value.
    package indirect enum Item {
        case uint32(UInt32), boolean(Bool), string(String), objectPath(String), strings([String])
        /// Bytes ("ay").
        case bytes([UInt8])
        /// A struct's fields.
        case structure([Item])
        /// A variant: its value's signature, and the value.
        case variant(String, Item)
        /// An array with no items, whose items align to `alignment` ("a{sv}": 8, "av": 1).
        case emptyArray(alignment: Int)
        /// A dictionary's entries ("a{..}").
        case entries([(Item, Item)])
    }

    /// A body of `items`, each aligned as D-Bus says.
    package static func body(_ items: [Item]) -> [UInt8] {
        var body: [UInt8] = []
        func align(_ alignment: Int) { while body.count % alignment != 0 { body.append(0) } }
        func string(_ text: String) {
            align(4)
            body += le32(UInt32(text.utf8.count)) + Array(text.utf8) + [0]
        }
        func append(_ item: Item) {
            switch item {
            case .uint32(let number): align(4); body += le32(number)
            case .boolean(let flag): align(4); body += le32(flag ? 1 : 0)
            case .string(let text), .objectPath(let text): string(text)
            case .bytes(let bytes):
                align(4)
                body += le32(UInt32(bytes.count)) + bytes
            case .strings(let texts):
                align(4)
                let lengthAt = body.count
                body += le32(0)
                let start = body.count
                for text in texts { string(text) }
                body.replaceSubrange(lengthAt..<(lengthAt + 4), with: le32(UInt32(body.count - start)))
            case .structure(let fields):
                align(8)
                fields.forEach(append)
            case .variant(let signature, let value):
                body += [UInt8(signature.utf8.count)] + Array(signature.utf8) + [0]
                append(value)
            case .emptyArray(let alignment):
                align(4)
                body += le32(0)
                align(alignment)
            case .entries(let entries):
                align(4)
                let lengthAt = body.count
                body += le32(0)
                align(8)
                let start = body.count
                for (key, value) in entries {
                    align(8)
                    append(key)
                    append(value)
                }
                body.replaceSubrange(lengthAt..<(lengthAt + 4), with: le32(UInt32(body.count - start)))
            }
        }
        items.forEach(append)
        return body
    }

    /// An IBusText holding `text`, as a variant ("v" of "(sa{sv}sv)").
    package static func ibusText(_ text: String) -> Item {
        .variant("(sa{sv}sv)", .structure([
            .string("IBusText"), .emptyArray(alignment: 8), .string(text),
            .variant("(sa{sv}av)", .structure([.string("IBusAttrList"), .emptyArray(alignment: 8), .emptyArray(alignment: 1)])),
        ]))
    }

    /// A body of one variant holding a variant ... `depth` deep, around a
    /// `u` ("v"): nesting no reader need take.
    package static func nestedVariants(depth: Int, innermost: UInt32) -> [UInt8] {
        var body = [UInt8](repeating: 0, count: 0)
        for _ in 0..<depth { body += [1, UInt8(ascii: "v"), 0] }
        body += [1, UInt8(ascii: "u"), 0]
        while body.count % 4 != 0 { body.append(0) }
        return body + le32(innermost)
    }

    package static func le32(_ number: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: number >> (8 * $0)) } }

    package static func u32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(bytes[at + $1]) << (8 * $1) }
    }

    /// Header fields of string, path, signature or number type, by code
    /// (numbers as their decimal text), from the array's items.
    package static func fields(_ bytes: [UInt8]) -> [UInt8: String] {
        var fields: [UInt8: String] = [:], at = 0
        func align(_ alignment: Int) { while at % alignment != 0 { at += 1 } }
        while true {
            align(8)
            guard at + 3 <= bytes.count, bytes[at + 1] == 1 else { return fields }
            let code = bytes[at], type = bytes[at + 2]
            at += 4  // code, the signature's length, its one type, its NUL
            switch type {
            case UInt8(ascii: "s"), UInt8(ascii: "o"):
                align(4)
                let length = Int(u32(bytes, at))
                fields[code] = String(decoding: bytes[(at + 4)..<(at + 4 + length)], as: UTF8.self)
                at += 4 + length + 1
            case UInt8(ascii: "g"):
                let length = Int(bytes[at])
                fields[code] = String(decoding: bytes[(at + 1)..<(at + 1 + length)], as: UTF8.self)
                at += 1 + length + 1
            case UInt8(ascii: "u"):
                align(4)
                fields[code] = String(u32(bytes, at))
                at += 4
            default: return fields
            }
        }
    }
}
