import Testing
import TetherRPC

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
