import Foundation
import Synchronization
import TetherLoop

/// A bus of the test's own in this process: one client, spoken to in
/// D-Bus's wire protocol written by hand (little-endian), so it can say
/// what no daemon would: garbage, a reply no reader can take apart, a flood,
/// silence. It agrees to any authentication and answers the client's calls
/// to the bus itself (Hello, AddMatch) unless the test reads them itself.
package final class ScriptedBus: @unchecked Sendable {
    package let address: String
    private let listener: Int32
    /// The client's socket: set by `accept`, shut by `hangUp` from any thread.
    private let accepted = Atomic<Int32>(-1)
    private var peer: Int32 { accepted.load(ordering: .acquiring) }
    private var buffer: [UInt8] = []
    private var serial: UInt32 = 1000
    /// The name Hello gives the client.
    package static let clientName = ":1.7"

    package init(in directory: String) throws {
        let path = directory + "/bus"
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_un()
        guard path.utf8.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(listener)
            throw POSIXError(.ENAMETOOLONG)
        }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(listener, 4) == 0 else { close(listener); throw POSIXError(.EADDRINUSE) }
        self.listener = listener
        self.address = "unix:path=" + path
    }

    deinit {
        close(listener)
        if peer >= 0 { close(peer) }
    }

    /// Accepts the client (the next, once one hung up), lets it
    /// authenticate, and answers its Hello.
    package func accept(timeout: Double = 10) throws {
        var pending = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        guard poll(&pending, 1, Int32(timeout * 1000)) == 1 else { throw TestTimeout(what: "the client to connect") }
        let peer = Glibc.accept(listener, nil, nil)
        guard peer >= 0 else { throw POSIXError(.ECONNABORTED) }
        // A client again (one that reconnected): the last one's bytes are gone.
        let last = accepted.exchange(-1, ordering: .acquiringAndReleasing)
        if last >= 0 { close(last) }
        buffer.removeAll()
        _ = fcntl(peer, F_SETFD, FD_CLOEXEC)
        accepted.store(peer, ordering: .releasing)
        // Authentication: a NUL, then lines, until BEGIN.
        while true {
            let line = try readLine(timeout: timeout)
            let words = line.split(separator: " ")
            switch words.first {
            case "AUTH" where words.count >= 3, "DATA": send(Array("OK 0123456789abcdef0123456789abcdef\r\n".utf8))
            case "AUTH": send(Array("DATA\r\n".utf8))
            case "NEGOTIATE_UNIX_FD": send(Array("AGREE_UNIX_FD\r\n".utf8))
            case "BEGIN":
                try answerBusCalls(until: "Hello", timeout: timeout)
                return
            default: send(Array("ERROR\r\n".utf8))
            }
        }
    }

    /// Reads the client's messages, answering its calls to the bus, until
    /// one whose member is `member` (answered too), which it returns.
    @discardableResult
    package func answerBusCalls(until member: String, timeout: Double = 10) throws -> Message {
        while true {
            let message = try read(timeout: timeout)
            if message.type == 1, message.destination == "org.freedesktop.DBus" {
                let hello = message.member == "Hello"
                send(Wire.message(type: 2, serial: nextSerial(), fields: Wire.reply(to: message.serial, destination: Self.clientName)
                                  + [(7, .string("org.freedesktop.DBus"))] + (hello ? [(8, .signature("s"))] : []),
                                  body: hello ? Wire.body([.string(Self.clientName)]) : []))
            }
            if message.member == member { return message }
        }
    }

    /// The client's next message.
    package func read(timeout: Double = 10) throws -> Message {
        try fill(16, timeout: timeout)
        guard buffer[0] == UInt8(ascii: "l") else { throw Failure(what: "a big-endian message") }
        let bodyLength = Int(Wire.u32(buffer, 4)), fieldsLength = Int(Wire.u32(buffer, 12))
        let headerLength = (16 + fieldsLength + 7) & ~7
        try fill(headerLength + bodyLength, timeout: timeout)
        let message = Message(type: buffer[1], serial: Wire.u32(buffer, 8),
                                  fields: Wire.fields(Array(buffer[16..<(16 + fieldsLength)])),
                                  body: Array(buffer[headerLength..<(headerLength + bodyLength)]))
        buffer.removeFirst(headerLength + bodyLength)
        return message
    }

    package func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(peer, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { return }
            offset += sent
        }
    }

    /// A signal from the bus's client side: `sender` as the bus would stamp it.
    package func signal(path: String, interface: String, member: String, sender: String = ":1.3", signature: String = "",
                body: [UInt8] = []) -> [UInt8] {
        Wire.message(type: 4, serial: nextSerial(),
                     fields: [(1, .objectPath(path)), (2, .string(interface)), (3, .string(member)), (7, .string(sender))]
                         + (signature.isEmpty ? [] : [(8, .signature(signature))]), body: body)
    }

    /// A method return (or, with `error`, an error) to `call`.
    package func reply(to call: Message, error: String? = nil, signature: String = "", body: [UInt8] = []) -> [UInt8] {
        Wire.message(type: error == nil ? 2 : 3, serial: nextSerial(),
                     fields: Wire.reply(to: call.serial, destination: Self.clientName) + [(7, .string(":1.3"))]
                         + (error.map { [(4, .string($0))] } ?? []) + (signature.isEmpty ? [] : [(8, .signature(signature))]),
                     body: body)
    }

    /// A method call from ":1.3" (no destination: as ibus-daemon calls an engine).
    package func call(path: String, interface: String, member: String, signature: String = "", body: [UInt8] = []) -> [UInt8] {
        call(serial: nextSerial(), path: path, interface: interface, member: member, signature: signature, body: body)
    }

    private func call(serial: UInt32, path: String, interface: String, member: String, signature: String,
                      body: [UInt8]) -> [UInt8] {
        Wire.message(type: 1, serial: serial,
                     fields: [(1, .objectPath(path)), (2, .string(interface)), (3, .string(member)), (7, .string(":1.3"))]
                         + (signature.isEmpty ? [] : [(8, .signature(signature))]), body: body)
    }

    /// Calls `member` on the client (no destination, as ibus-daemon calls an
    /// engine) and reads until its answer: the answer, and what came before it.
    package func ask(path: String, interface: String, member: String, signature: String = "",
                     body: [UInt8] = [], timeout: Double = 10) throws -> (answer: Message, before: [Message]) {
        let serial = nextSerial()
        send(call(serial: serial, path: path, interface: interface, member: member, signature: signature, body: body))
        var before: [Message] = []
        while true {
            let message = try read(timeout: timeout)
            if message.type == 2 || message.type == 3, message.fields[5] == String(serial) { return (message, before) }
            before.append(message)
        }
    }

    /// Answers the client's calls as `answer` says (nil: none), and its calls
    /// to the bus itself, until it hangs up; what it called, by member.
    @discardableResult
    package func serve(_ answer: (Message) -> [UInt8]?) -> [String] {
        var members: [String] = []
        while let message = try? read(timeout: 30) {
            if message.type == 1, message.destination == "org.freedesktop.DBus" {
                send(reply(to: message))
                continue
            }
            members.append(message.member ?? "?")
            if message.type == 1, let bytes = answer(message) { send(bytes) }
        }
        return members
    }

    /// Ends the connection: the client reads end-of-file.
    package func hangUp() {
        if peer >= 0 { shutdown(peer, Int32(SHUT_RDWR)) }
    }

    private func nextSerial() -> UInt32 {
        serial += 1
        return serial
    }

    private func readLine(timeout: Double) throws -> String {
        while true {
            if let end = buffer.firstIndex(of: 0x0A) {
                let line = buffer[..<end].filter { $0 != 0 && $0 != 0x0D }
                buffer.removeFirst(end + 1)
                return String(decoding: line, as: UTF8.self)
            }
            try fill(buffer.count + 1, timeout: timeout)
        }
    }

    private func fill(_ count: Int, timeout: Double) throws {
        let deadline = MonotonicClock.nanoseconds() + UInt64(timeout * 1e9)
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while buffer.count < count {
            let now = MonotonicClock.nanoseconds()
            var pending = pollfd(fd: peer, events: Int16(POLLIN), revents: 0)
            guard now < deadline, poll(&pending, 1, Int32((deadline - now) / 1_000_000) + 1) == 1 else {
                throw TestTimeout(what: "the client's bytes")
            }
            let got = recv(peer, &chunk, chunk.count, 0)
            guard got > 0 else { throw Failure(what: "the client hung up") }
            buffer += chunk.prefix(got)
        }
    }
}

extension ScriptedBus {
    package struct Failure: Error { package let what: String }

    /// One message as the client sent it: what the tests look at.
    package struct Message: Sendable {
        package let type: UInt8
        package let serial: UInt32
        package let fields: [UInt8: String]
        package let body: [UInt8]
        package var member: String? { fields[3] }
        package var destination: String? { fields[6] }
        package var path: String? { fields[1] }
    }
}
