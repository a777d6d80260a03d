import FoundationEssentials
import TetherLoop
import Glibc

/// A blocking stream socket spoken in newline-terminated lines.
final class LineSocket {
    let fd: Int32

    init(fd: Int32) { self.fd = fd }

    /// A Unix stream socket (close-on-exec) and `body` run with its address for `path`.
    private static func withSocket(at path: String, _ body: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Int32)
        -> (fd: Int32, rc: Int32) {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[index] = byte }
        }
        guard fd >= 0 else { return (fd, -1) }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        return (fd, rc)
    }

    convenience init(connectingTo path: String) throws {
        let (fd, rc) = Self.withSocket(at: path) { connect($0, $1, $2) }
        guard rc == 0 else {
            close(fd)
            throw BenchError.environment("cannot connect to \(path): \(String(cString: strerror(errno)))")
        }
        self.init(fd: fd)
    }

    /// A listening Unix stream socket at `path` (replacing a stale one).
    static func listen(at path: String) throws -> Int32 {
        unlink(path)
        let (fd, bound) = withSocket(at: path) { bind($0, $1, $2) }
        guard fd >= 0, bound == 0, Glibc.listen(fd, 16) == 0 else {
            if fd >= 0 { Glibc.close(fd) }
            throw BenchError.environment("cannot listen on \(path): \(String(cString: strerror(errno)))")
        }
        return fd
    }

    /// The next connection to `listener`, waiting at most `timeoutMilliseconds`.
    static func accept(_ listener: Int32, timeoutMilliseconds: Int32) throws -> LineSocket {
        var pfd = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        guard poll(&pfd, 1, timeoutMilliseconds) == 1 else { throw BenchError.environment("nobody connected in time") }
        let fd = Glibc.accept(listener, nil, nil)
        if fd >= 0 { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        guard fd >= 0 else { throw BenchError.environment("accept failed: \(String(cString: strerror(errno)))") }
        return LineSocket(fd: fd)
    }

    /// One line, waiting at most `timeoutMilliseconds` for each read.
    func readLine(timeoutMilliseconds: Int32) throws -> String {
        try nextLine(timeoutMilliseconds: timeoutMilliseconds)
    }

    /// Bytes read past the last line `nextLine` returned.
    private var pending: [UInt8] = []

    /// The next line, keeping what follows it for the next call; waits at
    /// most `timeoutMilliseconds` for each read.
    func nextLine(timeoutMilliseconds: Int32) throws -> String {
        while true {
            if let end = pending.firstIndex(of: 0x0a) {
                defer { pending.removeSubrange(...end) }
                return String(decoding: pending[..<end], as: UTF8.self)
            }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, timeoutMilliseconds) == 1 else { throw BenchError.environment("no line in time") }
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { throw BenchError.environment("the socket closed mid-benchmark") }
            pending += buffer[0..<n]
        }
    }

    func closeSocket() { Glibc.close(fd) }

    /// A connected pair of Unix stream sockets, close-on-exec.
    private static func socketPair() throws -> (mine: Int32, theirs: Int32) {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw BenchError.environment("socketpair failed: \(String(cString: strerror(errno)))")
        }
        return (fds[0], fds[1])
    }

    /// One end of a socketpair whose other end a thread echoes back: the
    /// raw ping/pong every IPC figure is set against.
    static func echoPair() throws -> LineSocket {
        let (mine, theirs) = try socketPair()
        try DetachedThread.start {
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(theirs, $0.baseAddress, $0.count) }
                guard n > 0 else { break }
                var sent = 0
                while sent < n {
                    let w = buffer.withUnsafeBytes { write(theirs, $0.baseAddress.map { $0 + sent }, n - sent) }
                    guard w > 0 else { break }
                    sent += w
                }
            }
            close(theirs)
        }
        return LineSocket(fd: mine)
    }

    /// One end of a socketpair whose other end is `cat`'s stdin and stdout:
    /// the same ping/pong, but across processes, as the host's is.
    static func echoProcess() throws -> (socket: LineSocket, process: BenchProcess) {
        let (mine, theirs) = try socketPair()
        defer { close(theirs) }
        let cat = try BenchProcess(["/bin/cat"], stdio: theirs)
        return (LineSocket(fd: mine), cat)
    }

    deinit { close(fd) }

    private var buffer = [UInt8](repeating: 0, count: 64 << 10)

    /// Sends `bytes` and reads nothing: a peer that never reads its replies.
    /// False once the other end has closed.
    @discardableResult
    func sendOnly(_ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress.map { $0 + sent }, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { return false }
            sent += n
        }
        return true
    }

    /// Sends `bytes` up to `atMost` times, as long as the socket takes them
    /// without waiting: a flooding peer that never reads.
    func sendWhileTaken(_ bytes: [UInt8], atMost: Int) {
        for _ in 0..<atMost {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, bytes.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            guard n == bytes.count else { return }
        }
    }

    /// Sends `bytes` and returns the first line that comes back.
    func readReply(to bytes: [UInt8]) throws -> String {
        guard sendOnly(bytes) else { throw BenchError.environment("the socket closed mid-benchmark") }
        var line: [UInt8] = []
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { throw BenchError.environment("the socket closed mid-benchmark") }
            if let end = buffer[0..<n].firstIndex(of: 0x0a) {
                line += buffer[0..<end]
                return String(decoding: line, as: UTF8.self)
            }
            line += buffer[0..<n]
        }
    }

    /// Sends `bytes`, then reads until `lines` newlines came back.
    func exchange(_ bytes: [UInt8], lines: Int) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress.map { $0 + sent }, bytes.count - sent) }
            guard n > 0 else { throw BenchError.environment("write to the socket failed: \(String(cString: strerror(errno)))") }
            sent += n
        }
        var seen = 0
        while seen < lines {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { throw BenchError.environment("the socket closed mid-benchmark") }
            for index in 0..<n where buffer[index] == 0x0a { seen += 1 }
        }
    }
}
