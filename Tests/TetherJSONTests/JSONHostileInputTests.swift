import Testing
import TetherJSON

/// What a hostile peer can put in a frame: every string escape, bytes that
/// are not UTF-8, duplicate keys, whitespace, and documents that end
/// early or go on. Each is read as the spec says, or refused, never
/// trapped on; what is written reads back the same.
@Suite struct JSONHostileInputTests {
    func parse(_ text: String) throws -> JSONValue { try JSONCodec.parse(Array(text.utf8)) }

    @Test func everyEscapeReadsAsItsCharacterAndWritesBack() throws {
        let value = try parse(#""\"\\\/\b\f\n\r\t\u0041\u00e9\u20ac\ud83d\ude00""#)
        #expect(value == .string("\"\\/\u{8}\u{c}\n\r\tAé€😀"))
        #expect(try JSONCodec.parse(JSONCodec.serialize(value)) == value)
        // Control characters are escaped when written: one frame, one line.
        let written = JSONCodec.serialize(.string("a\nb\u{0}c\u{1f}"))
        #expect(!written.contains(0x0a) && !written.contains(0) && !written.contains(0x1f))
        #expect(try JSONCodec.parse(written) == .string("a\nb\u{0}c\u{1f}"))
    }

    @Test(arguments: [
        #""\x""#, #""\u12""#, #""\u12G4""#, "\"raw\ncontrol\"", #""unterminated"#, #""\ud83d""#, #""\ude00""#,
        "{", "[", #"{"a"}"#, #"{"a":}"#, #"{"a":1,}"#, "[1,]", "[,1]", "{1:2}", "tru", "nul", "1 2", "[] []", "\u{feff}1",
    ])
    func brokenDocumentsAreRefused(_ text: String) {
        #expect(throws: JSONCodec.SyntaxError.self, "\(text.debugDescription)") { try parse(text) }
    }

    /// Bytes that are not UTF-8 inside a string are read as U+FFFD, each
    /// bad sequence one replacement: lossy, never trapped on, and what is
    /// written back is valid UTF-8.
    @Test func bytesThatAreNotUTF8BecomeReplacementCharacters() throws {
        for bytes: [UInt8] in [[0x22, 0xff, 0x22], [0x22, 0xc3, 0x22], [0x22, 0xed, 0xa0, 0x80, 0x22],
                               [0x22, 0x61, 0xf8, 0x88, 0x80, 0x80, 0x80, 0x62, 0x22]] {
            let text = try #require(try JSONCodec.parse(bytes).stringValue)
            #expect(text.unicodeScalars.contains("\u{FFFD}"), "\(bytes)")
            let written = JSONCodec.serialize(.string(text))
            #expect(String(validating: written, as: UTF8.self) != nil)
        }
    }

    @Test func whitespaceAroundAndBetweenIsTakenAndNothingElse() throws {
        #expect(try parse(" \t\r\n{ \"a\" :\n[ 1 , 2 ] }\n ") == ["a": [1, 2]])
        #expect(throws: JSONCodec.SyntaxError.self) { try parse("\u{a0}1") }
        #expect(throws: JSONCodec.SyntaxError.self) { try parse("") }
    }

    /// Duplicate keys: the last one stands (as most readers do), and the
    /// object written back has each key once.
    @Test func aDuplicateKeyKeepsTheLastValue() throws {
        let value = try parse(#"{"k":1,"k":2}"#)
        #expect(value == ["k": 2])
        #expect(String(decoding: JSONCodec.serialize(value), as: UTF8.self) == #"{"k":2}"#)
    }

    @Test func writtenObjectsHaveSortedKeysSoEqualValuesAreEqualBytes() throws {
        let one = try parse(#"{"b":1,"a":{"d":true,"c":null}}"#)
        let other = try parse(#"{"a":{"c":null,"d":true},"b":1}"#)
        #expect(JSONCodec.serialize(one) == JSONCodec.serialize(other))
        #expect(String(decoding: JSONCodec.serialize(one), as: UTF8.self) == #"{"a":{"c":null,"d":true},"b":1}"#)
    }

    @Test func deepDocumentsAreRefusedAtTheBoundWithoutRecursingFurther() {
        let limit = JSONCodec.maximumDepth
        let atLimit = String(repeating: "[", count: limit) + String(repeating: "]", count: limit)
        #expect((try? parse(atLimit)) != nil)
        let past = String(repeating: "[", count: 100_000)
        #expect(throws: JSONCodec.SyntaxError.self) { try parse(past) }
        let objects = String(repeating: #"{"a":"#, count: limit + 1) + "1" + String(repeating: "}", count: limit + 1)
        #expect(throws: JSONCodec.SyntaxError.self) { try parse(objects) }
    }

    @Test func aLargeFlatDocumentIsReadWhole() throws {
        let count = 50_000
        let text = "[" + (0..<count).map(String.init).joined(separator: ",") + "]"
        let value = try parse(text)
        #expect(value.arrayValue?.count == count)
        #expect(value.arrayValue?.last == .integer(count - 1))
    }
}
