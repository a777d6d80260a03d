import TetherGroup
import TetherIPC
import TetherLoop
#if canImport(Glibc)
import Glibc
#endif

/// A keyboard without open access started by hand attaches before it
/// confines itself, and then confines itself without `socket(AF_UNIX)`: no
/// code running in it afterwards can open a host's socket (its own group's
/// or another's), D-Bus or an agent. The hello is said and answered here,
/// before any of the author's code runs, so the one connection it keeps is
/// one the host already treats as this read-only keyboard; a refused or
/// unanswered one is closed before confinement.
///
/// Blocking, bounded calls on purpose: it runs once at start-up, before
/// the loop has anything else to do.
enum EarlyAttachment {
    enum Outcome {
        /// `descriptor`: the connected socket, its hello answered.
        case attached(descriptor: Int32, hostPID: Int32, openAccess: Bool)
        /// No host, or none that answered: the sentence saying so.
        case unattached(reason: String)
        case incompatible(reason: String)
    }

    /// The most it waits for a host: its socket while it starts, then the hello's answer.
    static let timeoutMilliseconds = 10_000
    private static let helloID = JSONValue.string("hello-before-confinement")

    static func attach(socketPath: String, hostLockPath: String, hello: JSONValue) -> Outcome {
        let deadline = MonotonicClock.nanoseconds() + UInt64(timeoutMilliseconds) * 1_000_000
        guard let fd = connect(socketPath, hostLockPath: hostLockPath, deadline: deadline) else {
            let held = (try? LockProbe.status(ofLockAt: hostLockPath, identifyHolder: false).running) ?? false
            return .unattached(reason: held ? "the host's socket did not answer" : "no host is running")
        }
        let outcome = handshake(fd, hello: hello, deadline: deadline)
        if case .attached = outcome { return outcome }
        close(fd)
        return outcome
    }

    /// A connected socket, retried (doubling waits, within the deadline)
    /// only while a host holds its lock but does not listen yet.
    private static func connect(_ path: String, hostLockPath: String, deadline: UInt64) -> Int32? {
        let bytes = Array(path.utf8)
        guard bytes.count < 108 else { return nil }
        var wait: Int32 = 5
        // A socket unit may listen with no host yet: one try starts it.
        var activates = SocketFile.exists(at: path)
        while true {
            let held = (try? LockProbe.status(ofLockAt: hostLockPath, identifyHolder: false).running) ?? false
            guard held || activates else { return nil }
            activates = false
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { return nil }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                for (index, byte) in bytes.enumerated() { raw[index] = byte }
            }
            let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
            let rc = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, length) }
            }
            if rc == 0 { return fd }
            close(fd)
            let now = MonotonicClock.nanoseconds()
            guard now < deadline else { return nil }
            let left = Int32(min(UInt64(Int32.max), (deadline - now) / 1_000_000))
            _ = poll(nil, 0, min(wait, left))
            wait = min(wait * 2, 500)
        }
    }

    private static func handshake(_ fd: Int32, hello: JSONValue, deadline: UInt64) -> Outcome {
        let frame = RPCMessage.request(id: helloID, method: HostMethod.hello, params: hello).encoded()
        var sent = 0
        while sent < frame.count {
            let wrote = frame[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard wrote > 0 else { return .unattached(reason: "the host's socket closed before the hello") }
            sent += wrote
        }
        while true {
            guard let line = readLine(fd, deadline: deadline) else {
                return .unattached(reason: "the host did not answer this keyboard's hello")
            }
            // Anything before the answer (the host sends nothing before it) is skipped.
            guard case .response(let id, let result)? = try? RPCMessage.parse(line), id == helloID else { continue }
            switch result {
            case .success(let answer):
                guard let answer = HelloAnswer(json: answer) else {
                    return .unattached(reason: "the host's answer to the hello named no pid")
                }
                return .attached(descriptor: fd, hostPID: answer.hostPID, openAccess: answer.openAccess)
            case .failure(let error) where error.code == RPCError.unsupportedProtocolCode:
                return .incompatible(reason: "the host refused this extension: \(error.message) "
                                     + "(this SDK speaks version \(HostProtocol.current))")
            case .failure(let error):
                return .unattached(reason: "the host refused this extension: \(error.message)")
            }
        }
    }

    /// One newline-terminated frame, consuming nothing after it: what
    /// follows is the link's, read on the loop.
    private static func readLine(_ fd: Int32, deadline: UInt64) -> [UInt8]? {
        var line: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4_096)
        while line.count <= LineFramer.defaultMaximumFrameSize {
            let now = MonotonicClock.nanoseconds()
            guard now < deadline else { return nil }
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, Int32(min(UInt64(Int32.max), (deadline - now) / 1_000_000 + 1))) == 1 else { continue }
            let peeked = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_PEEK)) }
            guard peeked > 0 else { return nil }
            let end = chunk[..<peeked].firstIndex(of: 0x0a)
            let take = end.map { $0 + 1 } ?? peeked
            let read = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, take, 0) }
            guard read == take else { return nil }
            line += chunk[..<(end ?? take)]
            if end != nil { return line }
        }
        return nil
    }
}
