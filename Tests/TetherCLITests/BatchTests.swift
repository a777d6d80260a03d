import Foundation
import Testing
import TetherTestSupport
import TetherIPC

/// JSON-RPC 2.0 batches (§6) against a real host, with the examples of the
/// specification's §7 (its made-up methods replaced by the host's own where
/// the example wants a success).
@Suite(.timed) struct BatchTests {
    func object(_ line: String?) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(try #require(line).utf8), options: [.fragmentsAllowed])
    }

    func errorCode(_ value: Any?) -> Int? { ((value as? [String: Any])?["error"] as? [String: Any])?["code"] as? Int }

    func withHost(_ body: (RawClient, TestProcess) throws -> Void) throws {
        let fixture = try HostFixture()
        try fixture.withHost { host in
            let client = try fixture.rawClient()
            defer { client.close() }
            try body(client, host)
        }
    }

    func send(_ client: RawClient, _ text: String) { client.send(Array(text.utf8) + [0x0a]) }

    @Test func aMixedBatchGetsOneArrayInOrderWithoutTheNotification() throws {
        try withHost { client, host in
            send(client, """
                [{"jsonrpc": "2.0", "method": "\(HostMethod.ping)", "id": "1"}, \
                {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}, \
                {"jsonrpc": "2.0", "method": "\(HostMethod.status)", "id": "2"}, \
                {"foo": "boo"}, \
                {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"}, \
                {"jsonrpc": "2.0", "method": "\(HostMethod.featureList)", "id": "9"}]
                """)
            let answers = try #require(try object(client.readLine()) as? [[String: Any]])
            #expect(answers.count == 5)
            #expect(answers.map { $0["id"] as? String } == ["1", "2", nil, "5", "9"])
            #expect((answers[0]["result"] as? [String: Any])?["pid"] as? Int == Int(host.pid))
            #expect((answers[1]["result"] as? [String: Any])?["pid"] as? Int == Int(host.pid))
            #expect(answers[2]["id"] is NSNull && errorCode(answers[2]) == -32600)
            #expect(errorCode(answers[3]) == -32601)
            #expect(answers[4]["result"] != nil)
        }
    }

    @Test func batchExamplesOfTheSpecificationGetTheirAnswers() throws {
        try withHost { client, _ in
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
            // Only notifications: nothing at all; the next answer is the ping's.
            send(client, #"[{"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]},{"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}]"#)
            send(client, #"{"jsonrpc": "2.0", "method": "\#(HostMethod.ping)", "id": "after"}"#)
            let after = try object(client.readLine()) as? [String: Any]
            #expect(after?["id"] as? String == "after", "nothing came back for the notifications")
        }
    }

    @Test func aBatchOverTheMemberLimitIsOneErrorAndTheConnectionStaysUsable() throws {
        try withHost { client, _ in
            let member = #"{"jsonrpc":"2.0","method":"\#(HostMethod.ping)","id":1}"#
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
        try withHost { client, _ in
            for _ in 0..<12 { send(client, "[1,2,3]") }
            #expect(client.isClosedByPeer(), "garbage batches count as garbage frames")
        }
    }

    /// A member answered later (a push waiting on its extension) holds the
    /// whole answer back: one array, in member order, once all are answered.
    @Test func aBatchWaitsForItsSlowestMember() throws {
        let fixture = try HostFixture()
        let host = try fixture.startHostWithExampleNotification()
        defer { host.signal(SIGTERM) }
        let client = try fixture.rawClient()
        defer { client.close() }
        send(client, #"[{"jsonrpc":"2.0","method":"\#(HostMethod.push)","params":{"payload":{"title":"Slow","delayMs":300}},"id":"push"},"#
             + #"{"jsonrpc":"2.0","method":"\#(HostMethod.ping)","id":"ping"}]"#)
        let answers = try #require(try object(client.readLine()) as? [[String: Any]])
        #expect(answers.map { $0["id"] as? String } == ["push", "ping"])
        let delivered = ((answers[0]["result"] as? [String: Any])?["delivered"] as? [[String: Any]])?.first
        #expect((delivered?["content"] as? [String: Any])?["title"] as? String == "[notify] Slow", "\(answers[0])")
    }
}
