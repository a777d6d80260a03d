import Foundation

/// A raw client socket, to send what a well-behaved client never would.
package struct RawClient {
    package let fd: Int32

    /// One end of a socket pair, say.
    package init(descriptor: Int32) { fd = descriptor }

    package init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        let fd = self.fd
        let rc = withUnixAddress(path) { connect(fd, $0, $1) }
        guard rc == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    package func send(_ bytes: [UInt8]) {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            sent += n
        }
    }

    /// Reads one line, or nil at end of stream; bounded by poll(2).
    package func readLine(timeout: Int32 = 10_000) -> String? {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, timeout) == 1 else { return nil }
            guard read(fd, &byte, 1) == 1 else { return line.isEmpty ? nil : String(decoding: line, as: UTF8.self) }
            if byte == 0x0a { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
    }

    /// True once the server has closed its end (reads until EOF, bounded).
    package func isClosedByPeer(timeout: Int32 = 10_000) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, timeout) == 1 else { return false }
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { return true }
        }
    }

    /// True once the server has closed any one of `clients`, all watched
    /// within one bound (one at a time, each left open would cost the
    /// whole bound). Nothing is read: what the server holds for them stays
    /// held, and a closed Unix socket says so (POLLHUP) with data unread.
    package static func anyClosedByPeer(_ clients: [RawClient], timeout: Int32 = 10_000) -> Bool {
        let deadline = Date().addingTimeInterval(Double(timeout) / 1000)
        while case let left = deadline.timeIntervalSinceNow, left > 0 {
            var fds = clients.map { pollfd(fd: $0.fd, events: 0, revents: 0) }
            guard poll(&fds, nfds_t(fds.count), Int32(left * 1000) + 1) > 0 else { return false }
            if fds.contains(where: { $0.revents & Int16(POLLHUP) != 0 }) { return true }
        }
        return false
    }

    /// Sends `bytes` up to `atMost` times, as fast as the socket takes
    /// them, until it takes nothing for `stall` ms (a peer that never reads,
    /// against a server that stopped reading); the bytes it took, which may
    /// end inside a copy.
    package func sendWhileTaken(_ bytes: [UInt8], atMost: Int, stall: Int32 = 1_000) -> Int {
        var total = 0
        for _ in 0..<atMost {
            var offset = 0
            while offset < bytes.count {
                var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                guard poll(&pfd, 1, stall) == 1 else { return total }
                let n = bytes[offset...].withUnsafeBytes {
                    Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
                }
                if n < 0, errno == EAGAIN || errno == EINTR { continue }
                guard n > 0 else { return total }
                offset += n
                total += n
            }
        }
        return total
    }

    /// Reads until `lines` newlines came, end of stream, or `timeout` ms
    /// without data; the newlines read.
    package func countLines(_ lines: Int, timeout: Int32 = 10_000) -> Int {
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var seen = 0
        while seen < lines {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, timeout) == 1 else { return seen }
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { return seen }
            for index in 0..<n where buffer[index] == 0x0a { seen += 1 }
        }
        return seen
    }

    package func close() { Glibc.close(fd) }
}

