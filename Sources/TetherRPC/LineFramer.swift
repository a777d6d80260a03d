import Glibc

/// Splits a byte stream into newline-terminated frames (NDJSON), refusing
/// any frame longer than `maximumFrameSize`: a peer cannot make the reader
/// buffer without bound.
package struct LineFramer: Sendable {
    package static let defaultMaximumFrameSize = 1 << 20

    package let maximumFrameSize: Int
    private var buffer: [UInt8] = []

    package struct FrameTooLarge: Error, Equatable {}

    /// Bytes of a frame received but not yet complete.
    package var bufferedCount: Int { buffer.count }

    package init(maximumFrameSize: Int = LineFramer.defaultMaximumFrameSize) {
        self.maximumFrameSize = maximumFrameSize
    }

    /// What is held of a frame never ended by its newline (the peer ended
    /// its side), as a frame, or nil; the buffer is empty after.
    package mutating func takeRemainder() -> [UInt8]? {
        var frame = buffer
        buffer = []
        if frame.last == 0x0d { frame.removeLast() }
        return frame.isEmpty ? nil : frame
    }

    /// Appends `bytes` and returns every complete frame (without its newline;
    /// a trailing '\r' is dropped too). Empty lines are skipped.
    package mutating func append(_ bytes: [UInt8]) throws(FrameTooLarge) -> [[UInt8]] {
        var frames: [[UInt8]] = []
        var start = 0
        while let index = Self.newline(in: bytes, from: start) {
            var frame = buffer
            frame += bytes[start..<index]
            buffer.removeAll(keepingCapacity: true)
            start = index + 1
            if frame.last == 0x0d { frame.removeLast() }
            guard frame.count <= maximumFrameSize else { throw FrameTooLarge() }
            if !frame.isEmpty { frames.append(frame) }
        }
        buffer += bytes[start...]
        guard buffer.count <= maximumFrameSize else { throw FrameTooLarge() }
        return frames
    }

    /// The first newline at or after `start`. By memchr: the scan is the
    /// framer's cost, and a loop over the bytes is 30 times slower where
    /// the code is not optimized (a 33 MiB answer took 15 s to refuse).
    private static func newline(in bytes: [UInt8], from start: Int) -> Int? {
        guard start < bytes.count else { return nil }
        return bytes.withUnsafeBufferPointer { all -> Int? in
            guard let base = all.baseAddress, let found = memchr(base + start, 0x0a, all.count - start) else { return nil }
            return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
        }
    }
}
