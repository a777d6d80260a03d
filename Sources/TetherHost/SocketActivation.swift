#if canImport(Glibc)
import Glibc
#endif

/// Socket activation, as `sd_listen_fds` reads it: a service manager that
/// listens on the group's socket (a `tether@.socket` instance) starts the host
/// on the first connection and passes the socket as descriptor 3 onward,
/// with `LISTEN_PID` (this process), `LISTEN_FDS` (how many) and,
/// optionally, `LISTEN_FDNAMES`. The connections waiting in its queue are
/// then the host's first clients.
package enum SocketActivation {
    /// The first descriptor passed (`SD_LISTEN_FDS_START`).
    static let firstDescriptor: Int32 = 3

    package struct Mismatch: Error, CustomStringConvertible {
        package let path: String
        package let passed: Int
        package var description: String {
            "the service manager passed \(passed) socket(s), none a listening Unix socket at \(path): "
                + "its socket unit must listen on the group's socket (tether service install writes one)"
        }
    }

    /// The passed socket listening at `path`, close-on-exec; nil when
    /// nothing was passed to this process. The other passed descriptors
    /// are closed.
    package static func listeningSocket(at path: String, environment: [String: String]) -> Result<Int32?, Mismatch> {
        guard let pid = environment["LISTEN_PID"].flatMap({ Int32($0) }), pid == getpid(),
              let count = environment["LISTEN_FDS"].flatMap({ Int32($0) }), count > 0, count <= 1_024
        else { return .success(nil) }
        var found: Int32?
        for fd in firstDescriptor..<(firstDescriptor + count) {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            if found == nil, isListeningUnixSocket(fd, at: path) { found = fd } else { close(fd) }
        }
        guard let found else { return .failure(Mismatch(path: path, passed: Int(count))) }
        return .success(found)
    }

    private static func isListeningUnixSocket(_ fd: Int32, at path: String) -> Bool {
        var listening: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &size) == 0, listening != 0 else { return false }
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let named = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0, address.sun_family == sa_family_t(AF_UNIX) else { return false }
        let bound = withUnsafeBytes(of: address.sun_path) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        return bound == path || resolved(bound) == resolved(path)
    }

    /// `path` with its directory's symbolic links resolved (the file, a
    /// socket, is named as it is).
    private static func resolved(_ path: String) -> String? {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return nil }
        let directory = String(path[..<slash])
        guard let real = realpath(directory.isEmpty ? "/" : directory, nil) else { return nil }
        defer { free(real) }
        return String(cString: real) + String(path[slash...])
    }
}
