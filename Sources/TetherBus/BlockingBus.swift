import CTetherBus
import TetherLoop
#if canImport(Glibc)
import Glibc
#endif

/// A connection used by one thread that may block: calls wait for their
/// answer, each bounded by its timeout. For questions asked where no loop
/// runs yet (the host's start, `doctor`); everything else uses
/// `BusConnection` on the loop.
package final class BlockingBus {
    private var bus: OpaquePointer?

    /// Connects to `address`, its handshake done within `timeoutMilliseconds`:
    /// sd-bus alone gives a handshake 90 s before any call's own bound
    /// counts, so a daemon that accepts and never answers (stopped, stuck)
    /// would hold the caller (the host's start, `doctor`, `login`) that long.
    package init(address: String, timeoutMilliseconds: UInt64) throws(BusError) {
        var reason = [CChar](repeating: 0, count: 256)
        guard tether_bus_load(&reason, reason.count) == 0 else {
            throw BusError(String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        var made: OpaquePointer?
        let opened = address.withCString { tether_bus_open($0, &made) }
        guard opened >= 0, let made else { throw BusError.errno(opened, "cannot connect to the bus") }
        bus = made
        // A transport of two descriptors (`unixexec:`) has none to poll:
        // there sd-bus's own wait drives the handshake, as before.
        guard tether_bus_fd(made) >= 0 else { return }
        let deadline = MonotonicClock.nanoseconds() + timeoutMilliseconds * 1_000_000
        let ready = try Self.run(made, until: deadline, ending: "cannot connect to the bus") { () throws(BusError) -> Bool in
            let ready = tether_bus_is_ready(made)
            if ready < 0 { throw BusError.errno(ready, "cannot connect to the bus") }
            return ready > 0
        }
        guard ready else { throw BusError("the bus did not finish its handshake within \(timeoutMilliseconds) ms") }
    }

    /// Lets sd-bus read, write and dispatch on `bus` until `done` says so
    /// (true) or the monotonic `deadline` passes (false). The deadline is
    /// checked each turn: a peer that keeps sending holds no one past it.
    private static func run(_ bus: OpaquePointer, until deadline: UInt64, ending what: String,
                            _ done: () throws(BusError) -> Bool) throws(BusError) -> Bool {
        while true {
            if try done() { return true }
            let processed = tether_bus_process(bus)
            if processed < 0 { throw BusError.errno(processed, what) }
            let now = MonotonicClock.nanoseconds()
            guard now < deadline else { return false }
            if processed > 0 { continue }
            var watched = pollfd(fd: tether_bus_fd(bus), events: Int16(truncatingIfNeeded: tether_bus_events(bus)), revents: 0)
            _ = poll(&watched, 1, Int32(clamping: (deadline - now + 999_999) / 1_000_000))
        }
    }

    deinit { tether_bus_close(bus) }

    /// Calls `member` and waits at most `timeoutMilliseconds` for its answer.
    package func call(destination: String, path: String, interface: String, member: String, _ arguments: [BusValue] = [],
                      timeoutMilliseconds: UInt64) throws(BusError) -> [BusValue] {
        guard let bus else { throw BusError("the bus connection is closed") }
        var message: OpaquePointer?
        let made = tether_bus_new_method_call(bus, &message, destination, path, interface, member)
        guard made >= 0, let message else { throw BusError.errno(made, "cannot make the call \(member)") }
        defer { tether_bus_message_unref(message) }
        try BusCoding.append(arguments, to: message)
        var error = tether_bus_error(name: nil, message: nil, _need_free: 0)
        defer { tether_bus_error_free(&error) }
        var reply: OpaquePointer?
        let result = tether_bus_call(bus, message, timeoutMilliseconds * 1_000, &error, &reply)
        guard result >= 0, let reply else {
            if let name = error.name {
                throw BusError(name: String(cString: name), error.message.map { String(cString: $0) } ?? String(cString: name))
            }
            throw BusError.errno(result, member)
        }
        defer { tether_bus_message_unref(reply) }
        return try BusCoding.readAll(reply)
    }

    /// A property's value (`org.freedesktop.DBus.Properties.Get`).
    package func property(destination: String, path: String, interface: String, name: String,
                          timeoutMilliseconds: UInt64) throws(BusError) -> BusValue {
        let answer = try call(destination: destination, path: path, interface: "org.freedesktop.DBus.Properties",
                              member: "Get", [.string(interface), .string(name)], timeoutMilliseconds: timeoutMilliseconds)
        guard let value = answer.first else { throw BusError("\(name): the answer is empty") }
        return value.unwrapped
    }

    /// Calls `member`, then reads the bus until a signal matching `rule`
    /// comes that `accept` takes (given the call's answer), for at most
    /// `timeoutMilliseconds` in all. The match is made before the call, so
    /// a signal the call causes cannot pass unseen (systemd's `JobRemoved`
    /// for the job a call queued, as `systemd-run` waits for it).
    package func call(destination: String, path: String, interface: String, member: String, _ arguments: [BusValue] = [],
                      thenAwait rule: String, until accept: ([BusValue], BusMessage) -> Bool,
                      timeoutMilliseconds: UInt64) throws(BusError) -> (answer: [BusValue], signal: BusMessage) {
        guard let bus else { throw BusError("the bus connection is closed") }
        let deadline = MonotonicClock.nanoseconds() + timeoutMilliseconds * 1_000_000
        var arrived: [BusMessage] = []
        let callback = BusCallback()
        callback.body = { message in
            if let decoded = try? BusMessage.decode(message) { arrived.append(decoded) }
            return 0
        }
        var slot: OpaquePointer?
        let added = tether_bus_add_match(bus, &slot, rule, busCallbackEntry, Unmanaged.passUnretained(callback).toOpaque())
        guard added >= 0 else { throw BusError.errno(added, "cannot subscribe to \(rule)") }
        defer {
            tether_bus_slot_unref(slot)
            withExtendedLifetime(callback) {}
        }
        let answer = try call(destination: destination, path: path, interface: interface, member: member, arguments,
                              timeoutMilliseconds: timeoutMilliseconds)
        var signal: BusMessage?
        _ = try Self.run(bus, until: deadline, ending: "the bus connection ended") { () throws(BusError) -> Bool in
            signal = arrived.first { accept(answer, $0) }
            arrived.removeAll()
            return signal != nil
        }
        guard let signal else { throw BusError("\(member): no answer's signal within \(timeoutMilliseconds) ms") }
        return (answer, signal)
    }
}
