#if canImport(Glibc)
import Glibc
#endif

/// Calls `body` with `path` as a Unix socket address, for `connect` or
/// `bind`. A path longer than `sun_path` holds is a mistake in the test.
package func withUnixAddress<Result>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
    precondition(path.utf8.count < MemoryLayout.size(ofValue: sockaddr_un().sun_path), "a socket path over 107 bytes: \(path)")
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        for (index, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[index] = byte }
    }
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
}
