import Foundation

/// A TCP socket bound to an ephemeral port on 127.0.0.1: closed, it gives a
/// port nothing listens on; listening without accepting, a server whose
/// connections complete (the backlog) and never get an answer.
package final class LoopbackSocket {
    package let fd: Int32
    package let port: Int

    package init(listening: Bool, backlog: Int32 = 16) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound, !listening || listen(fd, backlog) == 0 else {
            let error = POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            close(fd)
            throw error
        }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(fd) }

    /// A TCP port on 127.0.0.1 that nothing listens on (bound, then closed).
    package static func unusedPort() throws -> Int {
        try LoopbackSocket(listening: false).port
    }
}
