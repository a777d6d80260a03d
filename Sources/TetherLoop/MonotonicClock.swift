#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Nanoseconds on the monotonic clock, for deadlines and measurements.
package enum MonotonicClock {
    @inline(__always)
    package static func nanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// The same clock in seconds.
    package static func seconds() -> Double { Double(nanoseconds()) / 1e9 }
}
