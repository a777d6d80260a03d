import Foundation
import Testing
import TetherRPC
import TetherTestSupport

/// JSON-RPC 2.0 batches (§6) and what comes back to a peer, as the
/// transport does it for every server (the host's included), with the
/// examples of the specification's §7 (its made-up methods replaced by the
/// echo server's where the example wants a success).
@Suite(.timed) struct RPCBatchTests {
    func object(_ line: String?) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(try #require(line).utf8), options: [.fragmentsAllowed])
    }

    func errorCode(_ value: Any?) -> Int? { ((value as? [String: Any])?["error"] as? [String: Any])?["code"] as? Int }

    func withClient(_ body: (RawClient) throws -> Void) throws {
        let server = try EchoServer()
        let client = try RawClient(path: server.path)
        defer { client.close() }
        try body(client)
    }

    func send(_ client: RawClient, _ text: String) { client.send(Array(text.utf8) + [0x0a]) }

    @Test func aMixedBatchGetsOneArrayInOrderWithoutTheNotification() throws {
        try withClient { client in
            send(client, """
                [{"jsonrpc": "2.0", "method": "echo", "params": ["one"], "id": "1"}, \
                {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}, \
                {"jsonrpc": "2.0", "method": "echo", "params": ["two"], "id": "2"}, \
                {"foo": "boo"}, \
                {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"}, \
                {"jsonrpc": "2.0", "method": "uid", "id": "9"}]
                """)
            let answers = try #require(try object(client.readLine()) as? [[String: Any]])
            #expect(answers.count == 5)
            #expect(answers.map { $0["id"] as? String } == ["1", "2", nil, "5", "9"])
            #expect(answers[0]["result"] as? [String] == ["one"])
            #expect(answers[1]["result"] as? [String] == ["two"])
            #expect(answers[2]["id"] is NSNull && errorCode(answers[2]) == -32600)
            #expect(errorCode(answers[3]) == -32601)
            #expect(answers[4]["result"] as? Int == Int(geteuid()))
        }
    }

    @Test func batchExamplesOfTheSpecificationGetTheirAnswers() throws {
        try withClient { client in
            // Invalid JSON: one parse error, not an array.
            send(client, #"[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},{"jsonrpc": "2.0", "method"]"#)
            let parse = try object(client.readLine()) as? [String: Any]
            #expect(errorCode(parse) == -32700 && parse?["id"] is NSNull)
            // An empty array: one invalid request, not an array.
            send(client, "[]")
            let empty = try object(client.readLine()) as? [String: Any]
            #expect(errorCode(empty) == -32600 && empty?["id"] is NSNull)
            // Not empty, but invalid: an array of one error per member.
            send(client, "[1]")
            let one = try #require(try object(client.readLine()) as? [Any])
            #expect(one.count == 1 && errorCode(one[0]) == -32600)
            send(client, "[1,2,3]")
            let three = try #require(try object(client.readLine()) as? [Any])
            #expect(three.count == 3 && three.allSatisfy { errorCode($0) == -32600 })
            // Only notifications: nothing at all; the next answer is the echo's.
            send(client, #"[{"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]},{"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}]"#)
            send(client, #"{"jsonrpc": "2.0", "method": "echo", "params": [], "id": "after"}"#)
            let after = try object(client.readLine()) as? [String: Any]
            #expect(after?["id"] as? String == "after", "nothing came back for the notifications")
        }
    }

    @Test func aBatchOverTheMemberLimitIsOneErrorAndTheConnectionStaysUsable() throws {
        try withClient { client in
            let member = #"{"jsonrpc":"2.0","method":"echo","params":[1],"id":1}"#
            send(client, "[" + Array(repeating: member, count: 129).joined(separator: ",") + "]")
            let refused = try object(client.readLine()) as? [String: Any]
            #expect(errorCode(refused) == -32600)
            let message = (refused?["error"] as? [String: Any])?["message"] as? String
            #expect(message?.hasSuffix("a batch may have at most 128 members") == true, "\(message ?? "")")
            send(client, "[" + Array(repeating: member, count: 128).joined(separator: ",") + "]")
            let answers = try #require(try object(client.readLine()) as? [[String: Any]])
            #expect(answers.count == 128 && answers.allSatisfy { $0["result"] != nil })
        }
    }

    @Test func batchesOfNothingButGarbageGetThePeerDisconnected() throws {
        try withClient { client in
            for _ in 0..<12 { send(client, "[1,2,3]") }
            #expect(client.isClosedByPeer(), "garbage batches count as garbage frames")
        }
    }

    /// A member answered later holds the whole answer back: one array, in
    /// member order, once all are answered.
    @Test func aBatchWaitsForItsSlowestMember() throws {
        try withClient { client in
            send(client, #"[{"jsonrpc":"2.0","method":"later","params":[300],"id":"later"},"#
                 + #"{"jsonrpc":"2.0","method":"echo","params":["now"],"id":"now"}]"#)
            let answers = try #require(try object(client.readLine()) as? [[String: Any]])
            #expect(answers.map { $0["id"] as? String } == ["later", "now"])
            #expect(answers[0]["result"] as? [Int] == [300] && answers[1]["result"] as? [String] == ["now"])
        }
    }

    /// A peer sending mostly garbage is disconnected; one with the odd bad
    /// frame is answered.
    @Test func garbageWithOneValidRequestInEightIsDisconnected() throws {
        let server = try EchoServer()
        let request = Array(#"{"jsonrpc":"2.0","id":1,"method":"echo","params":[]}"#.utf8) + [0x0a]
        let client = try RawClient(path: server.path)
        for _ in 0..<4 {
            for _ in 0..<7 { client.send(Array("not json at all\n".utf8)) }
            client.send(request)
        }
        #expect(client.isClosedByPeer(), "a peer sending mostly garbage is disconnected")
        client.close()
        let polite = try RawClient(path: server.path)
        defer { polite.close() }
        for _ in 0..<3 {
            polite.send(Array("oops\n".utf8))
            for _ in 0..<3 { polite.send(request) }
        }
        for _ in 0..<12 { #expect(polite.readLine() != nil) }
    }

    /// Ids come back as sent, digit for digit: 64-bit integers past a
    /// double's 53 bits, a double, and -0.
    @Test func idsComeBackAsSent() throws {
        let numbers: [(sent: String, back: String)] = [
            ("9007199254740993", "9007199254740993"),          // 2^53 + 1
            ("9223372036854775807", "9223372036854775807"),    // Int64.max
            ("18446744073709551615", "18446744073709551615"),  // UInt64.max
            ("-9223372036854775808", "-9223372036854775808"),  // -2^63
            ("12345678901234567890", "12345678901234567890"),
            ("1e19", "1e+19"),                                 // a double
            ("-0", "-0"),
        ]
        try withClient { client in
            for number in numbers {
                send(client, #"{"jsonrpc":"2.0","id":\#(number.sent),"method":"echo","params":[]}"#)
                let line = try #require(client.readLine())
                #expect(line == #"{"id":\#(number.back),"jsonrpc":"2.0","result":[]}"#, "\(number.sent): \(line)")
            }
        }
    }
}
