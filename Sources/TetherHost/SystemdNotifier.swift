import Glibc

/// `sd_notify` for `Type=notify` units: one datagram to `$NOTIFY_SOCKET`
/// (a path, or '@' for the abstract namespace). Without the variable, nothing.
/// Never blocks: it is sent from the host's loop, and a manager that stops
/// reading costs a lost message (the watchdog then does its job), not a
/// frozen host.
package enum SystemdNotifier {
    @discardableResult
    package static func notify(_ state: String, environment: [String: String]) -> Bool {
        guard let target = environment["NOTIFY_SOCKET"], !target.isEmpty,
              target.utf8.count < 108 else { return false }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(target.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
            if bytes.first == 0x40 { raw[0] = 0 }  // '@' names an abstract socket
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        let message = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                message.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT), socketAddress, length) }
            }
        }
        return sent == message.count
    }
}
