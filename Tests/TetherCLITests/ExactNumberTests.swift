import Foundation
import Testing
import TetherTestSupport
import TetherIPC

/// 64-bit integers cross every boundary exactly: the defaults store and the
/// CLI, a push through a Swift notification extension, and a stored token
/// expiry (a JSON-RPC id is the transport's: `RPCBatchTests`). Each case is
/// (what is sent, what must come back).
@Suite(.timed) struct ExactNumberTests {
    static let numbers: [(sent: String, back: String)] = [
        ("9007199254740993", "9007199254740993"),          // 2^53 + 1
        ("9223372036854775807", "9223372036854775807"),    // Int64.max
        ("18446744073709551615", "18446744073709551615"),  // UInt64.max
        ("-9223372036854775808", "-9223372036854775808"),  // -2^63
        ("1e19", "1e+19"),                                 // a double
        ("-0", "-0"),
    ]

    @Test func defaultsKeepEveryNumberExactly() throws {
        let group = try TestGroup()
        for (index, number) in Self.numbers.enumerated() {
            // `--`: a negative number would read as an option.
            let set = try group.run(["defaults", "set", "n\(index)", "--", number.sent])
            #expect(set.status == 0, "\(set.stderr)")
            #expect(try group.run(["defaults", "get", "n\(index)"]).stdout == number.back + "\n", "\(number.sent)")
        }
        let list = try group.run(["defaults", "list"]).stdout
        for (index, number) in Self.numbers.enumerated() {
            #expect(list.contains("n\(index) = \(number.back)\n"), "\(number.sent) in: \(list)")
        }
        let file = try String(contentsOfFile: group.path + "/stores/defaults.json", encoding: .utf8)
        #expect(file.contains(#""n0":9007199254740993"#) && file.contains(#""n2":18446744073709551615"#), "\(file)")
    }

    @Test func aPushPayloadReachesTheExtensionAndComesBackExactly() throws {
        let fixture = try HostFixture()
        let host = try fixture.startHostWithExampleNotification()
        defer { host.signal(SIGTERM) }
        let fields = Self.numbers.enumerated().map { #""n\#($0.offset)":\#($0.element.sent)"# }
        let payload = #"{"title":"Order","orderId":12345678901234567890,"# + fields.joined(separator: ",") + "}"
        let result = try fixture.group.run(["push", "--json", payload])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains(#""title":"[notify] Order""#), "the extension rewrote it: \(result.stdout)")
        #expect(result.stdout.contains(#""orderId":12345678901234567890"#), "\(result.stdout)")
        for (index, number) in Self.numbers.enumerated() {
            #expect(result.stdout.contains(#""n\#(index)":\#(number.back)"#), "\(number.sent) in \(result.stdout)")
        }
    }

    @Test func aStoredTokenExpiryIsKeptAndShownWithoutTrapping() throws {
        let group = try TestGroup()
        #expect(try group.run(["defaults", "list"]).status == 0, "the group exists")
        try group.makeSecrets()
        for number in Self.numbers {
            let credentials = #"{"configuration":{"clientID":"x","tokenURL":"http://127.0.0.1:9/token"},"#
                + #""user":{"accessToken":"opaque-token","expiresAt":\#(number.sent),"refreshToken":"r","tokenType":"Bearer"}}"#
            try writeFile(group.credentialsPath, credentials, mode: 0o600)
            let json = try group.run(["token", "status", "--json"])
            #expect(json.status == 0, "\(number.sent): \(json.stderr)")
            #expect(json.stdout.contains(#""expiry":\#(number.back)"#), "\(number.sent): \(json.stdout)")
            let text = try group.run(["token", "status"])
            #expect(text.status == 0, "\(number.sent): \(text.stderr)")
            #expect(text.stdout.contains("user token"), "\(number.sent): \(text.stdout)")
        }
    }
}
