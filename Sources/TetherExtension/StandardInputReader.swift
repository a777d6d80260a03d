import TetherLoop
#if canImport(Glibc)
import Glibc
#endif

/// Reads standard input on a thread of its own, in blocking reads, and hands
/// each line over. A thread rather than the loop: stdin may be a terminal
/// (which the loop would switch to non-blocking mode, under the shell's
/// feet) or a regular file (which epoll refuses).
enum StandardInputReader {
    enum Event: Sendable {
        case line(String)
        case end
    }

    static let maximumLine = 64 * 1024

    static func start(_ deliver: @escaping @Sendable (Event) -> Void) {
        let started: Void? = try? DetachedThread.start {
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                for byte in buffer[..<count] {
                    if byte == 0x0a || pending.count >= maximumLine {
                        if pending.last == 0x0d { pending.removeLast() }
                        deliver(.line(String(decoding: pending, as: UTF8.self)))
                        pending.removeAll(keepingCapacity: true)
                        if byte == 0x0a { continue }
                    }
                    pending.append(byte)
                }
            }
            if !pending.isEmpty { deliver(.line(String(decoding: pending, as: UTF8.self))) }
            deliver(.end)
        }
        if started == nil { deliver(.end) }
    }
}
