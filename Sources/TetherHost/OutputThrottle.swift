/// A token bucket over an extension's output, in lines and bytes per second:
/// what one extension may put in the host's log, so that a chatty one cannot
/// take the host over. Lines beyond it are dropped and counted; reading
/// pauses while the bucket is empty, so the excess costs the host nothing
/// (the extension's writes wait on its full pipe).
struct OutputThrottle {
    static let linesPerSecond = 200.0
    static let bytesPerSecond = 256.0 * 1024
    /// Bursts: a start-up banner or a stack trace passes whole.
    static let lineBurst = 1_000.0
    static let byteBurst = 1024.0 * 1024

    private var lines = OutputThrottle.lineBurst
    private var bytes = OutputThrottle.byteBurst
    private var refilledAt: UInt64

    init(now: UInt64) { refilledAt = now }

    /// Refills for the time since the last call (milliseconds on the loop clock).
    mutating func refill(now: UInt64) {
        guard now > refilledAt else { return }
        let seconds = Double(now - refilledAt) / 1000
        refilledAt = now
        lines = min(Self.lineBurst, lines + seconds * Self.linesPerSecond)
        bytes = min(Self.byteBurst, bytes + seconds * Self.bytesPerSecond)
    }

    /// Takes one line of `count` bytes; false if it must be dropped.
    mutating func admit(byteCount count: Int) -> Bool {
        guard lines >= 1, bytes >= Double(count) || bytes >= Self.byteBurst else { return false }
        lines -= 1
        bytes -= Double(count)
        return true
    }

    var isEmpty: Bool { lines < 1 || bytes < 1 }

    /// How long reading pauses once the bucket runs dry.
    static let pauseMilliseconds: UInt64 = 100
}
