import Testing
import TetherLoop

/// Times as `tether token` shows them: an expiry comes from a token
/// server (a JWT's `exp`), so any number must give a date or nil, never a trap.
@Suite struct WallClockTests {
    @Test func anyNumberOfSecondsIsADateOrNil() {
        for seconds in [Double.nan, .infinity, -.infinity, 1e300, -1e300, 253_402_300_800, -62_135_596_801, .greatestFiniteMagnitude] {
            #expect(WallClock.iso8601(seconds: seconds) == nil, "\(seconds)")
        }
        #expect(WallClock.iso8601(seconds: 253_402_300_799.9) == "9999-12-31T23:59:59Z")
        #expect(WallClock.iso8601(seconds: -62_135_596_800) == "0001-01-01T00:00:00Z")
        #expect(WallClock.iso8601(seconds: 0.9) == "1970-01-01T00:00:00Z")
        #expect(WallClock.iso8601(seconds: -0.5) == "1969-12-31T23:59:59Z")
        #expect(WallClock.iso8601(seconds: 1_000_000_000) == "2001-09-09T01:46:40Z")
    }
}
