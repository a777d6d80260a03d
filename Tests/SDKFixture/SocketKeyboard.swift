import TetherExtension
#if canImport(Glibc)
import Glibc
#endif

/// What hostile code in a keyboard started by hand could try once the SDK
/// has confined it, each key saying what the kernel or the host answered:
/// - "connect PATH JSON": a Unix socket of its own to PATH (a host's
///   socket), the JSON-RPC line sent without a hello, the answer read;
/// - "link JSON": the line written straight onto the SDK's own connection
///   to its host (as a child that inherited it would);
/// - "start NAME": the SDK's own call, which its role may make.
struct SocketKeyboard: Keyboard {
    func keyPressed(_ text: String, in context: ExtensionContext) async throws {
        let words = text.split(separator: " ", maxSplits: 2).map(String.init)
        switch words.first {
        case "connect" where words.count == 3:
            context.log("connect \(words[1]): \(Self.send(words[2], toSocketAt: words[1]))")
        case "link" where words.count >= 2:
            let line = words.dropFirst().joined(separator: " ")
            guard let fd = Self.descriptor(connectedTo: context.identity.group.socketPath) else {
                return context.log("link: no connection to the host")
            }
            let bytes = Array((line + "\n").utf8)
            let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            context.log(sent == bytes.count ? "link: sent" : "link: \(Self.error())")
        case "start" where words.count == 2:
            do {
                context.log("started \(words[1]): \(try await context.startFeature(words[1]))")
            } catch {
                context.log("cannot start \(words[1]): \(error)")
            }
        default:
            context.log("typed: \(text)")
        }
    }

    static func error() -> String { String(cString: strerror(errno)) }

    static func socketAddress(_ path: String) -> (sockaddr_un, socklen_t) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8.prefix(107))
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        return (address, socklen_t(MemoryLayout<sa_family_t>.size + bytes.count))
    }

    static func send(_ line: String, toSocketAt path: String) -> String {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return "socket refused (\(error()))" }
        defer { close(fd) }
        let made = socketAddress(path)
        var address = made.0
        let length = made.1
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) }
        }
        guard connected == 0 else { return "connect refused (\(error()))" }
        let bytes = Array((line + "\n").utf8)
        guard bytes.withUnsafeBytes({ Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == bytes.count else {
            return "send failed (\(error()))"
        }
        var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&ready, 1, 5_000) == 1 else { return "sent; no answer" }
        var buffer = [UInt8](repeating: 0, count: 4_096)
        let read = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        return "answered \(String(decoding: buffer[..<max(0, read)], as: UTF8.self).split(separator: "\n").first ?? "")"
    }

    /// The descriptor of this process's connection to the socket at `path`.
    static func descriptor(connectedTo path: String) -> Int32? {
        for fd in Int32(0)..<1_024 {
            var address = sockaddr_un()
            var length = socklen_t(MemoryLayout<sockaddr_un>.size)
            let named = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
            }
            guard named == 0, address.sun_family == sa_family_t(AF_UNIX) else { continue }
            let peer = withUnsafeBytes(of: address.sun_path) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if peer == path { return fd }
        }
        return nil
    }
}
