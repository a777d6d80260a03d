import Testing
import TetherIPC

@Suite struct LineFramerTests {
    @Test func splitsFramesAcrossReadsAndDropsCarriageReturns() throws {
        var framer = LineFramer()
        #expect(try framer.append(Array("{\"a\":".utf8)).isEmpty)
        let frames = try framer.append(Array("1}\r\n\n{\"b\":2}\n{\"c\"".utf8))
        #expect(frames.map { String(decoding: $0, as: UTF8.self) } == ["{\"a\":1}", "{\"b\":2}"])
        #expect(try framer.append(Array(":3}\n".utf8)).map { String(decoding: $0, as: UTF8.self) } == ["{\"c\":3}"])
    }

    @Test func refusesAFrameOverTheLimitEvenWithoutANewline() {
        var framer = LineFramer(maximumFrameSize: 16)
        #expect(throws: LineFramer.FrameTooLarge.self) { try framer.append([UInt8](repeating: 0x61, count: 17)) }
        var second = LineFramer(maximumFrameSize: 16)
        #expect(throws: LineFramer.FrameTooLarge.self) { try second.append(Array((String(repeating: "b", count: 20) + "\n").utf8)) }
    }
}

@Suite struct RPCMessageTests {
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

    @Test(arguments: [
        ("not json", -32700), ("\u{00}\u{ff}\u{fe}", -32700), (#"{"jsonrpc":"2.0","id":1,"method":"#, -32700),
        ("[1,2]", -32600), (#"{"id":1,"method":"x"}"#, -32600), (#"{"jsonrpc":"2.0","id":1,"method":7}"#, -32600),
        (#"{"jsonrpc":"2.0","id":{},"method":"x"}"#, -32600), (#"{"jsonrpc":"2.0","id":1,"method":"x","params":3}"#, -32600),
    ])
    func malformedFramesGiveTheRightErrorCode(_ text: String, _ code: Int) {
        #expect(throws: RPCError.self) { try RPCMessage.parse(Array(text.utf8)) }
        do { _ = try RPCMessage.parse(Array(text.utf8)) } catch { #expect(error.code == code) }
    }

    @Test func encodingRoundTrips() throws {
        let messages: [RPCMessage] = [
            .request(id: 7, method: "feature.start", params: ["name": "rec"]),
            .notification(method: "host.stopping", params: nil),
            .response(id: "x", result: .failure(.methodNotFound("nope"))),
            .response(id: 1, result: .success(["pid": 42, "ok": true, "list": ["a", 1.5]])),
        ]
        for message in messages {
            let frame = message.encoded()
            #expect(frame.last == 0x0a)
            #expect(try RPCMessage.parse(Array(frame.dropLast())) == message)
        }
    }
}
