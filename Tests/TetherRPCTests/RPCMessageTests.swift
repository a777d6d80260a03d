import Testing
import TetherRPC
import TetherJSON

/// JSON-RPC 2.0 frames: each kind reads back what it writes, and each way
/// a peer gets a frame wrong has its own error, with the spec's code.
@Suite struct RPCMessageTests {
    @Test(arguments: [
        RPCMessage.request(id: 1, method: "host.ping", params: nil),
        .request(id: "a-1", method: "push.send", params: ["payload": ["title": "Hi"]]),
        .request(id: .null, method: "x", params: [1, 2]),
        .notification(method: "store.changed", params: ["store": "defaults"]),
        .notification(method: "host.stopping", params: nil),
        .response(id: 7, result: .success(["ok": true])),
        .response(id: "z", result: .failure(.refused("no"))),
        .response(id: 3, result: .failure(RPCError(code: -32002, message: "m", data: ["supported": ["min": 1, "max": 2]]))),
        .response(id: 1, result: .success(["pid": 42, "ok": true, "list": ["a", 1.5]])),
    ])
    func everyKindReadsBackWhatItWrites(_ message: RPCMessage) throws {
        let frame = message.encoded()
        #expect(frame.last == 0x0a)
        #expect(frame.dropLast().contains(0x0a) == false, "one line a message")
        #expect(try RPCMessage.parse(Array(frame.dropLast())) == message)
    }

    @Test(arguments: [
        (#"not json"#, -32700),
        (#"[1"#, -32700),
        ("\u{00}\u{ff}\u{fe}", -32700),
        (#"{"jsonrpc":"2.0","id":1,"method":"#, -32700),
        ("[1,2]", -32600),
        (#"{"jsonrpc":"2.0","id":1,"method":"x","params":3}"#, -32600),
        (#"42"#, -32600),
        (#"{"id":1,"method":"x"}"#, -32600),
        (#"{"jsonrpc":"1.0","id":1,"method":"x"}"#, -32600),
        (#"{"jsonrpc":"2.0","id":1,"method":7}"#, -32600),
        (#"{"jsonrpc":"2.0","id":1,"method":"x","params":"flat"}"#, -32600),
        (#"{"jsonrpc":"2.0","id":{"nested":1},"method":"x"}"#, -32600),
        (#"{"jsonrpc":"2.0","result":1}"#, -32600),
        (#"{"jsonrpc":"2.0","id":1}"#, -32600),
        (#"{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}"#, -32600),
    ])
    func aWrongFrameGetsItsOwnError(_ text: String, _ code: Int) {
        do {
            _ = try RPCMessage.parse(Array(text.utf8))
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.code == code, "\(text): \(error)")
            #expect(!error.message.isEmpty)
        }
    }

    @Test func parsesRequestsNotificationsAndResponses() throws {
        #expect(try RPCMessage.parse(Array(#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.utf8))
            == .request(id: 1, method: "ping", params: nil))
        #expect(try RPCMessage.parse(Array(#"{"jsonrpc":"2.0","method":"tick","params":{"n":2}}"#.utf8))
            == .notification(method: "tick", params: ["n": 2]))
        #expect(try RPCMessage.parse(Array(#"{"jsonrpc":"2.0","id":"a","result":[true,null]}"#.utf8))
            == .response(id: "a", result: .success([true, nil])))
        #expect(try RPCMessage.parse(Array(#"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no"}}"#.utf8))
            == .response(id: 3, result: .failure(RPCError(code: -32601, message: "no"))))
    }

    @Test func aBatchAnswerIsOneArrayFrame() throws {
        let frame = RPCMessage.encodedBatch([.response(id: 1, result: .success(true)),
                                             .response(id: 2, result: .failure(.methodNotFound("nope")))])
        let value = try JSONCodec.parse(Array(frame.dropLast()))
        let members = try #require(value.arrayValue)
        #expect(members.count == 2)
        #expect(try RPCMessage(members[1]) == .response(id: 2, result: .failure(.methodNotFound("nope"))))
    }

    @Test func errorsCarryTheSpecsCodesAndNoSecrets() {
        #expect(RPCError.parseError("x").code == -32700)
        #expect(RPCError.invalidRequest("x").code == -32600)
        #expect(RPCError.methodNotFound("m").message == "Method not found: m")
        #expect(RPCError.invalidParams("p").code == -32602)
        #expect(RPCError.internalError("i").code == -32603)
        #expect(RPCError.refused("r") == RPCError(code: -32001, message: "r"))
    }
}
