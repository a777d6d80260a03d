import Testing
@testable import TetherHost

/// An extension's output: whole lines, a runaway line cut, a rate that
/// refills with time (no processes: the loop clock is a number here).
@Suite struct LineSplitterTests {
    @Test func chunksBecomeWholeLinesAndAPartialLineWaitsForItsNewline() {
        var splitter = LineSplitter()
        #expect(splitter.append(Array("one\ntw".utf8)) == ["one"])
        #expect(splitter.append(Array("o\nthree".utf8)) == ["two"])
        #expect(splitter.append(Array("\n\n".utf8)) == ["three", ""])
        #expect(splitter.flush() == nil)
        _ = splitter.append(Array("tail".utf8))
        #expect(splitter.flush() == "tail")
        #expect(splitter.flush() == nil)
    }

    @Test func aRunawayLineIsCutAtItsMaximum() {
        var splitter = LineSplitter()
        let long = [UInt8](repeating: 0x61, count: LineSplitter.maximumLine * 2 + 10)
        let lines = splitter.append(long)
        #expect(lines.count == 2)
        #expect(lines.allSatisfy { $0.utf8.count == LineSplitter.maximumLine })
        #expect(splitter.flush()?.utf8.count == 10)
    }

    @Test func refusedLinesAreCountedAndNeverMade() {
        var splitter = LineSplitter()
        var offered: [Int] = []
        let lines = splitter.append(Array("a\nbb\nccc\n".utf8)) { count in
            offered.append(count)
            return count != 2
        }
        #expect(lines == ["a", "ccc"])
        #expect(offered == [1, 2, 3])
        #expect(splitter.dropped == 1)
    }
}

@Suite struct OutputThrottleTests {
    @Test func aBurstPassesThenTheRateRefillsWithTime() {
        var throttle = OutputThrottle(now: 0)
        var admitted = 0
        while throttle.admit(byteCount: 10), admitted < 10_000 { admitted += 1 }
        #expect(admitted == Int(OutputThrottle.lineBurst))
        #expect(throttle.isEmpty)
        // Half a second later: half a second's lines.
        throttle.refill(now: 500)
        var later = 0
        while throttle.admit(byteCount: 10), later < 10_000 { later += 1 }
        #expect(later == Int(OutputThrottle.linesPerSecond / 2))
        // A clock that went back refills nothing.
        throttle.refill(now: 100)
        let admittedAfterGoingBack = throttle.admit(byteCount: 1)
        #expect(!admittedAfterGoingBack)
    }

    /// A full bucket passes one line of any size, which leaves it in debt:
    /// the bytes come back at the rate before the next line passes.
    @Test func oneHugeLinePassesAFullBucketAndIsPaidBackAtTheRate() {
        var throttle = OutputThrottle(now: 0)
        let huge = throttle.admit(byteCount: Int(OutputThrottle.byteBurst) * 2)
        let next = throttle.admit(byteCount: 1_000)
        throttle.refill(now: 1_000)
        let afterASecond = throttle.admit(byteCount: 1_000)
        throttle.refill(now: 1_000 + UInt64(OutputThrottle.byteBurst * 2 / OutputThrottle.bytesPerSecond * 1_000))
        let paidBack = throttle.admit(byteCount: 1_000)
        #expect(huge && !next && !afterASecond && paidBack)
    }
}

/// The pushes held per connection and in total (invariant 22).
@Suite struct PushLedgerTests {
    final class Peer {}

    @Test func aConnectionIsRefusedPastItsCountOrBytesAndTheTotalMakesRoomFromTheLargest() {
        let (small, large) = (Peer(), Peer())
        let (a, b) = (ObjectIdentifier(small), ObjectIdentifier(large))
        var ledger = PushLedger(limits: .init(pushesPerSender: 2, bytesPerSender: 100, totalBytes: 150))
        #expect(ledger.refusal(a, bytes: 10) == nil)
        ledger.charge(a, bytes: 10)
        ledger.charge(a, bytes: 10)
        #expect(ledger.refusal(a, bytes: 1)?.message.contains("2 pushes in flight") == true)
        #expect(ledger.refusal(b, bytes: 101)?.message.contains("over its limit of 100") == true)
        ledger.charge(b, bytes: 100)
        #expect(ledger.totalBytes == 120)
        #expect(!ledger.fits(40))
        // The small sender's push is not refused behind the large holder.
        #expect(ledger.largestHolder(over: a, adding: 40) == b)
        #expect(ledger.largestHolder(over: b, adding: 40) == nil)
        ledger.release(b, bytes: 100)
        #expect(ledger.fits(40))
        #expect(ledger.held[b] == nil || ledger.held[b]?.bytes == 0)
    }
}

/// Why an exit happened, as `status --json` tells it.
@Suite struct ExtensionExitTests {
    @Test func theReasonIsTheHostsIntentElseWhatTheStatusSays() {
        #expect(ExtensionExit(status: .exited(3), intended: nil, at: "").reason == .exited)
        #expect(ExtensionExit(status: .signaled(11), intended: nil, at: "").reason == .crashed)
        #expect(ExtensionExit(status: .signaled(25), intended: nil, at: "").reason == .disk)  // SIGXFSZ
        #expect(ExtensionExit(status: .signaled(9), intended: .unresponsive, at: "").reason == .unresponsive)
        let json = ExtensionExit(status: .signaled(9), intended: .memory, memoryLimitMiB: 64, at: "t").json
        #expect(json["reason"] == "memory")
        #expect(json["signal"] == 9)
    }
}
