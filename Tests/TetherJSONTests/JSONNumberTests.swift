import Testing
@testable import TetherJSON

/// Integers that fit Int64 or UInt64 survive the codec exactly; other
/// numbers are the nearest Double written in shortest round-trip form.
@Suite struct JSONNumberTests {
    func parse(_ text: String) throws -> JSONValue { try JSONCodec.parse(Array(text.utf8)) }
    func text(_ value: JSONValue) -> String { String(decoding: JSONCodec.serialize(value), as: UTF8.self) }

    /// The text each value must come back as, byte for byte.
    static let exact: [(String, String)] = [
        ("9007199254740993", "9007199254740993"),          // 2^53 + 1: a Double would say ...992
        ("9223372036854775807", "9223372036854775807"),    // Int64.max
        ("18446744073709551615", "18446744073709551615"),  // UInt64.max
        ("-9223372036854775808", "-9223372036854775808"),  // Int64.min
        ("12345678901234567890", "12345678901234567890"),  // an order id above Int64.max
        ("1e19", "1e+19"),                                 // a double stays a double
        ("-0", "-0"),
        ("-0.0", "-0"),
        ("0", "0"),
        ("1000000000000000", "1000000000000000"),          // 1e15 as an integer: no ".0"
        ("0.1", "0.1"),
        ("-2.5", "-2.5"),
        ("1E3", "1000"),
        ("18446744073709551616", "1.8446744073709552e+19"), // UInt64.max + 1: only a double can hold it
        ("-9223372036854775809", "-9.223372036854776e+18"), // Int64.min - 1
    ]

    @Test func integersRoundTripExactlyAndOtherNumbersAsShortestDoubles() throws {
        for (source, expected) in Self.exact {
            let value = try parse(source)
            #expect(text(value) == expected, "\(source)")
            #expect(try parse(text(value)) == value, "\(source) reads back equal")
            #expect(value.description == expected, "description of \(source)")
        }
        #expect(try parse("9007199254740993").int64Value == 9_007_199_254_740_993)
        #expect(try parse("18446744073709551615").uint64Value == UInt64.max)
        #expect(try parse("18446744073709551615").int64Value == nil)
        #expect(try parse("-9223372036854775808").int64Value == Int64.min)
        #expect(try parse("1e19").numberValue?.isInteger == false)
        #expect(try parse("-0").doubleValue?.sign == .minus)
        #expect(try parse("[9007199254740993]") != (try parse("[9007199254740992]")), "no rounding in comparisons")
    }

    @Test func equalNumbersAreEqualAndHashAlikeWhateverTheirSpelling() throws {
        let spellings = ["1", "1.0", "1e0", "10e-1"]
        let values = try spellings.map(parse)
        #expect(Set(values).count == 1)
        #expect(Set([JSONValue.integer(0), .double(0), .double(-0.0)]).count == 1)
        #expect(JSONValue.integer(UInt64.max) != .double(18_446_744_073_709_551_616.0), "UInt64.max is not the double 2^64")
        #expect(JSONValue.integer(9_007_199_254_740_993) != .double(9_007_199_254_740_992), "2^53 + 1 is not 2^53")
        let ids: [JSONValue: String] = [.integer(Int64.max): "max", .integer(Int64.max - 1): "max-1"]
        let max = try parse("9223372036854775807"), belowMax = try parse("9223372036854775806")
        #expect(ids[max] == "max" && ids[belowMax] == "max-1")
    }

    @Test func nothingThatPrintsANumberTraps() {
        for value: Double in [9.3e18, 1.9e19, -9.3e18, 1e300, -1e300, .infinity, -.infinity, .nan, .ulpOfOne, 2e-308] {
            _ = JSONValue.double(value).description
            _ = JSONValue.number(JSONNumber(value)).intValue
            _ = JSONNumber(value).uint64Value
        }
        #expect(JSONValue.double(.nan).description == "null")
        #expect(JSONValue.double(9.3e18).description == "9.3e+18")
        #expect(JSONValue.double(-9.3e18).intValue == nil)
    }

    @Test(arguments: ["-", "--1", "-01", "1.e3", ".5", "1e+", "0x10", "+0", "1_000", "Infinity", "-Infinity", "1e400", "-1e400"])
    func malformedOrUnrepresentableNumbersAreRefused(_ source: String) {
        #expect(throws: JSONCodec.SyntaxError.self) { try parse(source) }
    }
}
