/// A small, strict JSON (RFC 8259) reader and writer for `JSONValue`.
///
/// Foundation's coders cost 5-7 µs per small message each way, more than
/// the whole socket round trip, and recurse without a bound on nesting. This
/// one works on bytes, refuses nesting deeper than `maximumDepth`, and
/// writes object keys sorted, so equal values encode identically.
package enum JSONCodec {
    package static let maximumDepth = 64

    package struct SyntaxError: Error, Equatable, CustomStringConvertible {
        package let offset: Int
        package let reason: String
        package var description: String { "\(reason) at byte \(offset)" }
    }

    // MARK: - Reading

    /// Parses one document. `maximumDepth` bounds nesting (a container at
    /// the top counts as level 1); a store file allows one level more than a
    /// value, for the object that wraps its values.
    package static func parse(_ bytes: [UInt8], maximumDepth: Int = JSONCodec.maximumDepth) throws(SyntaxError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { buffer throws(SyntaxError) in
            var reader = Reader(bytes: buffer, maximumDepth: maximumDepth)
            let value = try reader.value(depth: 0)
            reader.skipWhitespace()
            guard reader.index == buffer.count else { throw reader.error("unexpected data after the value") }
            return value
        }
    }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        let maximumDepth: Int
        var index = 0

        func error(_ reason: String) -> SyntaxError { SyntaxError(offset: index, reason: reason) }

        mutating func skipWhitespace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0a || bytes[index] == 0x0d || bytes[index] == 0x09 {
                index += 1
            }
        }

        mutating func value(depth: Int) throws(SyntaxError) -> JSONValue {
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of input") }
            switch bytes[index] {
            case UInt8(ascii: "{"): return try object(depth: depth + 1)
            case UInt8(ascii: "["): return try array(depth: depth + 1)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): try literal("true"); return .bool(true)
            case UInt8(ascii: "f"): try literal("false"); return .bool(false)
            case UInt8(ascii: "n"): try literal("null"); return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
            default: throw error("unexpected character")
            }
        }

        mutating func literal(_ word: StaticString) throws(SyntaxError) {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count else { throw error("unexpected end of input") }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] {
                throw error("invalid literal")
            }
            index += count
        }

        mutating func object(depth: Int) throws(SyntaxError) -> JSONValue {
            guard depth <= maximumDepth else { throw error("nested deeper than \(maximumDepth) levels") }
            index += 1
            var object: [String: JSONValue] = [:]
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(object)
            }
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a string key") }
                let key = try string()
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
                index += 1
                object[key] = try value(depth: depth)
                skipWhitespace()
                guard index < bytes.count else { throw error("unexpected end of input") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(object) }
                throw error("expected ',' or '}'")
            }
        }

        mutating func array(depth: Int) throws(SyntaxError) -> JSONValue {
            guard depth <= maximumDepth else { throw error("nested deeper than \(maximumDepth) levels") }
            index += 1
            var array: [JSONValue] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(array)
            }
            while true {
                array.append(try value(depth: depth))
                skipWhitespace()
                guard index < bytes.count else { throw error("unexpected end of input") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(array) }
                throw error("expected ',' or ']'")
            }
        }

        mutating func string() throws(SyntaxError) -> String {
            index += 1
            let start = index
            // Fast path: no escapes.
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                    index += 1
                    return text
                }
                if byte == UInt8(ascii: "\\") { break }
                guard byte >= 0x20 else { throw error("control character in a string") }
                index += 1
            }
            var scratch = Array(bytes[start..<index])
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return String(decoding: scratch, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard index < bytes.count else { throw error("unexpected end of input") }
                    let escape = bytes[index]
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scratch.append(escape)
                    case UInt8(ascii: "b"): scratch.append(0x08)
                    case UInt8(ascii: "f"): scratch.append(0x0c)
                    case UInt8(ascii: "n"): scratch.append(0x0a)
                    case UInt8(ascii: "r"): scratch.append(0x0d)
                    case UInt8(ascii: "t"): scratch.append(0x09)
                    case UInt8(ascii: "u"):
                        var scalar = try hex4()
                        if (0xd800..<0xdc00).contains(scalar) {
                            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                                throw error("unpaired surrogate")
                            }
                            index += 2
                            let low = try hex4()
                            guard (0xdc00..<0xe000).contains(low) else { throw error("unpaired surrogate") }
                            scalar = 0x10000 + ((scalar - 0xd800) << 10) + (low - 0xdc00)
                        } else if (0xdc00..<0xe000).contains(scalar) {
                            throw error("unpaired surrogate")
                        }
                        guard let unicode = Unicode.Scalar(scalar) else { throw error("invalid \\u escape") }
                        scratch.append(contentsOf: Array(String(Character(unicode)).utf8))
                    default:
                        throw error("invalid escape")
                    }
                default:
                    guard byte >= 0x20 else { throw error("control character in a string") }
                    scratch.append(byte)
                }
            }
            throw error("unterminated string")
        }

        mutating func hex4() throws(SyntaxError) -> UInt32 {
            guard index + 4 <= bytes.count else { throw error("unexpected end of input") }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw error("invalid \\u escape")
                }
                value = value << 4 | UInt32(digit)
                index += 1
            }
            return value
        }

        /// Integers (no fraction, no exponent) that fit Int64 or UInt64 are
        /// kept exactly; "-0" and everything else become the nearest Double.
        mutating func number() throws(SyntaxError) -> JSONNumber {
            let start = index
            let negative = bytes[index] == UInt8(ascii: "-")
            if negative { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number") }
            var magnitude: UInt64 = 0
            var fits = true
            if bytes[index] == UInt8(ascii: "0") {
                index += 1
            } else {
                while index < bytes.count, isDigit(bytes[index]) {
                    if fits {
                        let (times10, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
                        let (sum, overflow2) = times10.addingReportingOverflow(UInt64(bytes[index] - UInt8(ascii: "0")))
                        if overflow1 || overflow2 { fits = false } else { magnitude = sum }
                    }
                    index += 1
                }
            }
            var integer = true
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                integer = false
                index += 1
                guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number") }
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                integer = false
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number") }
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            }
            if integer, fits {
                if !negative { return JSONNumber(magnitude) }
                if magnitude == 0 { return JSONNumber(-0.0) }
                if magnitude <= UInt64(Int64.max) { return JSONNumber(-Int64(magnitude)) }
                if magnitude == UInt64(Int64.max) + 1 { return JSONNumber(Int64.min) }
            }
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            guard let value = Double(text), value.isFinite else { throw error("number out of range") }
            return JSONNumber(value)
        }

        func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
    }

    // MARK: - Writing

    /// Compact JSON, object keys sorted, '/' not escaped.
    package static func serialize(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128)
        write(value, to: &out)
        return out
    }

    package static func write(_ value: JSONValue, to out: inout [UInt8]) {
        switch value {
        case .null: out += "null".utf8
        case .bool(let flag): out += (flag ? "true" : "false").utf8
        case .number(let number): out += number.description.utf8
        case .string(let text): writeString(text, to: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (position, item) in items.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                write(item, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            for (position, key) in object.keys.sorted().enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                writeString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                if let item = object[key] { write(item, to: &out) }
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Control characters are escaped, and so is what `PrintableText`
    /// names (DEL, C1, bidi controls, U+2028/9): still valid JSON, read back
    /// exactly, but nothing a terminal showing the raw line would act on.
    private static func writeString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        defer { out.append(UInt8(ascii: "\"")) }
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) {
            out += text.utf8  // the common case: printable ASCII, nothing to escape
            return
        }
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += #"\""#.utf8
            case "\\": out += #"\\"#.utf8
            case "\n": out += #"\n"#.utf8
            case "\r": out += #"\r"#.utf8
            case "\t": out += #"\t"#.utf8
            case _ where PrintableText.needsEscape(scalar):
                // Every such scalar is in the Basic Multilingual Plane: one \uXXXX.
                let value = scalar.value
                out += #"\u"#.utf8
                for shift in stride(from: 12, through: 0, by: -4) { out.append(hexDigits[Int((value >> UInt32(shift)) & 0xf)]) }
            default: out += scalar.utf8
            }
        }
    }
}
