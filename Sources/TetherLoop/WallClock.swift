#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The real-time clock as people and logs read it, without Foundation.
package enum WallClock {
    /// Seconds since 1970, with the nanoseconds as a fraction.
    package static func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    /// Now, UTC, ISO 8601 with milliseconds: `2026-11-21T19:40:28.139Z`.
    package static func iso8601() -> String {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return format(seconds: spec.tv_sec, milliseconds: Int32(spec.tv_nsec / 1_000_000)) ?? "\(spec.tv_sec)"
    }

    /// `seconds` since 1970, UTC, ISO 8601 to the second; nil for a time no
    /// calendar year of four digits can show (a NaN, or beyond year 9999).
    package static func iso8601(seconds: Double) -> String? {
        guard seconds.isFinite, seconds >= -62_135_596_800, seconds < 253_402_300_800 else { return nil }
        return format(seconds: time_t(seconds.rounded(.down)), milliseconds: nil)
    }

    private static func format(seconds: time_t, milliseconds: Int32?) -> String? {
        var seconds = seconds
        var parts = tm()
        guard gmtime_r(&seconds, &parts) != nil else { return nil }
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        let date = "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))"
        return date + (milliseconds.map { ".\(pad($0, 3))Z" } ?? "Z")
    }
}
