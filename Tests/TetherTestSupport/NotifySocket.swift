import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The `NOTIFY_SOCKET` a service manager listens on: a datagram socket in
/// a directory of the test's, or at an abstract name ('@' in the
/// variable, as systemd passes it), one message per datagram.
package final class NotifySocket: @unchecked Sendable {  // its descriptor is only read
    /// What `NOTIFY_SOCKET` says: the path, or '@' and the abstract name.
    package let path: String
    private let fd: Int32

    package convenience init(in directory: String) throws {
        try self.init(address: directory + "/notify.sock")
    }

    /// At an abstract name: nothing in the file system to leave behind.
    package convenience init(abstract name: String) throws {
        try self.init(address: "@" + name)
    }

    private init(address: String) throws {
        path = address
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var socketAddress = sockaddr_un()
        socketAddress.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(address.utf8)
        precondition(bytes.count < MemoryLayout.size(ofValue: socketAddress.sun_path), "a socket address over 107 bytes: \(address)")
        withUnsafeMutableBytes(of: &socketAddress.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
            if bytes.first == UInt8(ascii: "@") { raw[0] = 0 }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        let bound = withUnsafePointer(to: &socketAddress) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard fd >= 0, bound == 0 else { throw TestTimeout(what: "a notify socket at \(address): errno \(errno)") }
    }

    deinit { close(fd) }

    /// The next message, or nil after `timeout` seconds (scaled, as every bounded wait).
    package func next(timeout: Double) -> String? {
        var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&ready, 1, Int32(timeout * TestTimeout.scale * 1_000)) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4_096)
        let read = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        return read < 0 ? nil : String(decoding: buffer[..<read], as: UTF8.self)
    }

    /// The first message that contains `text`, within `timeout` seconds.
    package func expect(_ text: String, timeout: Double = 10) throws -> String {
        let deadline = TestTimeout.deadline(after: timeout)
        var seen: [String] = []
        while deadline.timeIntervalSinceNow > 0, let message = next(timeout: deadline.timeIntervalSinceNow) {
            if message.contains(text) { return message }
            seen.append(message)
        }
        throw TestTimeout(what: "'\(text)' on the notify socket (saw \(seen))")
    }

    /// What has arrived already, dropped; how many.
    @discardableResult
    package func drain() -> Int {
        var count = 0
        while next(timeout: 0) != nil { count += 1 }
        return count
    }
}
