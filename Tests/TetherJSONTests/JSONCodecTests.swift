import Foundation
import Testing
@testable import TetherJSON

@Suite struct JSONCodecTests {
    func parse(_ text: String) throws -> JSONValue { try JSONCodec.parse(Array(text.utf8)) }
    func text(_ value: JSONValue) -> String { String(decoding: JSONCodec.serialize(value), as: UTF8.self) }

    @Test func readsWhatFoundationReadsAndWritesItBack() throws {
        let source = #" { "b" : [1, -2.5, 1e3, 0, -0.125, 12345678901234, true, false, null], "a": {"x": "y\n\"z\" \\ / \u00e9\ud83d\ude00\t"}, "": [] } "#
        let value = try parse(source)
        #expect(value == (try JSONDecoder().decode(JSONValue.self, from: Data(source.utf8))))
        #expect(value["a"]?["x"]?.stringValue == "y\n\"z\" \\ / é😀\t")
        #expect(text(value) == #"{"":[],"a":{"x":"y\n\"z\" \\ / é😀\t"},"b":[1,-2.5,1000,0,-0.125,12345678901234,true,false,null]}"#)
        #expect(try parse(text(value)) == value, "round trip")
        #expect(text(.string("\u{1}")) == #""\u0001""#)
    }

    @Test(arguments: [
        "", " ", "{", "[1,]", "{\"a\"}", "{\"a\":1,}", "01", "1.", "-", "1e", "+1", "tru", "nul", "\"abc",
        "\"\\x\"", "\"\\ud800\"", "\"\\udc00\"", "\"a\u{1}\"", "[1] 2", "NaN", "1e999", "{1:2}",
    ])
    func refusesWhatIsNotJSON(_ source: String) {
        #expect(throws: JSONCodec.SyntaxError.self) { try parse(source) }
    }

    @Test func nestingIsBounded() throws {
        let ok = String(repeating: "[", count: JSONCodec.maximumDepth) + String(repeating: "]", count: JSONCodec.maximumDepth)
        #expect(throws: Never.self) { try parse(ok) }
        // A frame of a million '[' must be an error, not a stack overflow.
        #expect(throws: JSONCodec.SyntaxError.self) { try parse(String(repeating: "[", count: 1 << 20)) }
    }
}
