import CTetherBus
import SystemPackage
import TetherLoop

/// One connection to a message bus, driven by the libuv loop: sd-bus says
/// which events it wants on its socket and when its next timeout falls;
/// the loop watches for them and lets sd-bus dispatch. No thread of its
/// own. Every call happens on the loop's thread. Replies, signals and
/// calls to exported objects come to closures; the connection's end, to
/// `onClose`, once. Like a libuv handle, an open connection is kept by its
/// loop: it lives until it is closed, or ends, or the loop stops.
package final class BusConnection: @unchecked Sendable {
    package let loop: EventLoop
    /// Told once when the connection ends by itself (the bus went away),
    /// with why; never after `close()`.
    package var onClose: ((BusError) -> Void)?
    private var bus: OpaquePointer?
    private var watcher: PollWatcher?
    private var timer: LoopTimer
    /// What sd-bus's callbacks name (userdata): held while their slots live.
    private var callbacks: [ObjectIdentifier: BusCallback] = [:]
    /// Exported objects' callbacks by path: also for calls that come with
    /// no destination (a bus that is itself the peer, as ibus-daemon is),
    /// which sd-bus's own dispatch leaves unanswered.
    private var exported: [String: BusCallback] = [:]
    private var dispatching = false
    /// The loop's hold on an open connection.
    private var retained: Unmanaged<BusConnection>?
    private var closeAfterDispatch: BusError??
    /// Its `whenStopping`, forgotten once it closes.
    private var stopRegistration: Int?
    /// A dispatch waits for the loop's next turn (more was waiting).
    private var turnQueued = false

    /// Messages dispatched in one turn of the loop before others get theirs.
    static let dispatchesPerTurn = 64

    /// Connects to `address` (the handshake and Hello go on as the loop runs).
    package init(loop: EventLoop, address: String) throws(BusError) {
        loop.preconditionInLoop()
        self.loop = loop
        timer = LoopTimer(loop: loop)
        var reason = [CChar](repeating: 0, count: 256)
        guard tether_bus_load(&reason, reason.count) == 0 else {
            timer.close()
            throw BusError(String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        var made: OpaquePointer?
        let opened = address.withCString { tether_bus_open($0, &made) }
        guard opened >= 0, let made else {
            timer.close()
            throw BusError.errno(opened, "cannot connect to the bus at \(address)")
        }
        bus = made
        do {
            watcher = try PollWatcher(loop: loop, fileDescriptor: tether_bus_fd(made))
        } catch {
            tether_bus_close(made)
            bus = nil
            timer.close()
            throw BusError("cannot watch the bus: \(error)")
        }
        retained = Unmanaged.passRetained(self)
        let filter = BusCallback()
        filter.body = { [unowned self] message in self.peerCall(message) }
        do throws(BusError) {
            try register(filter) { bus, slot, userdata throws(BusError) in
                let added = tether_bus_add_filter(bus, &slot, busCallbackEntry, userdata)
                if added < 0 { throw BusError.errno(added, "cannot watch the bus's messages") }
            }
        } catch {
            close()
            throw error
        }
        stopRegistration = loop.whenStopping { [weak self] in self?.close() }
        rearm()
    }

    package var isOpen: Bool { bus != nil }

    /// The connection's unique name on the bus, once Hello is answered.
    package var uniqueName: String? {
        guard let bus else { return nil }
        var name: UnsafePointer<CChar>?
        guard tether_bus_unique_name(bus, &name) >= 0, let name else { return nil }
        return String(cString: name)
    }

    /// Calls `member`; `done` gets the answer, an error answer as a failure,
    /// or the timeout's failure; never after `close()`.
    package func call(destination: String?, path: String, interface: String?, member: String, _ arguments: [BusValue] = [],
                      timeoutMilliseconds: UInt64 = 25_000,
                      done: @escaping (Result<BusMessage, BusError>) -> Void) {
        loop.preconditionInLoop()
        let callback = BusCallback()
        do throws(BusError) {
            let message = try methodCall(destination: destination, path: path, interface: interface, member: member, arguments)
            defer { tether_bus_message_unref(message) }
            try register(callback) { bus, slot, userdata throws(BusError) in
                let sent = tether_bus_call_async(bus, &slot, message, busCallbackEntry, userdata, timeoutMilliseconds * 1_000)
                if sent < 0 { throw BusError.errno(sent, "cannot call \(member)") }
            }
        } catch {
            return done(.failure(error))
        }
        callback.body = { [unowned self, unowned callback] message in
            self.release(callback)
            do throws(BusError) {
                let answer = try BusMessage.decode(message)
                done(answer.error.map { .failure($0) } ?? .success(answer))
            } catch {
                done(.failure(error))
            }
            return 1
        }
        rearm()
    }

    /// Sends a signal from `path`.
    package func emit(path: String, interface: String, member: String, _ arguments: [BusValue]) throws(BusError) {
        guard let bus else { throw BusError("the bus connection is closed") }
        var message: OpaquePointer?
        let made = tether_bus_new_signal(bus, &message, path, interface, member)
        guard made >= 0, let message else { throw BusError.errno(made, "cannot make the signal \(member)") }
        defer { tether_bus_message_unref(message) }
        try BusCoding.append(arguments, to: message)
        try send(message, member)
    }

    /// Signals matching `rule` (a D-Bus match rule) come to `handler` until
    /// the subscription is cancelled or the connection closes.
    @discardableResult
    package func subscribe(_ rule: String, _ handler: @escaping (BusMessage) -> Void) throws(BusError) -> BusSubscription {
        let callback = BusCallback()
        callback.body = { message in
            if let decoded = try? BusMessage.decode(message) { handler(decoded) }
            return 0
        }
        try register(callback) { bus, slot, userdata throws(BusError) in
            let added = tether_bus_add_match(bus, &slot, rule, busCallbackEntry, userdata)
            if added < 0 { throw BusError.errno(added, "cannot subscribe to \(rule)") }
        }
        rearm()
        return BusSubscription(connection: self, callback: callback)
    }

    /// Method calls to `path` come to `handler`, which answers through the
    /// call (now or later) and returns true, or false for a method it does
    /// not know (sd-bus then answers UnknownMethod).
    @discardableResult
    package func export(path: String, _ handler: @escaping (BusIncomingCall) -> Bool) throws(BusError) -> BusSubscription {
        let callback = BusCallback()
        callback.body = { [unowned self] message in
            guard let decoded = try? BusMessage.decode(message) else {
                BusIncomingCall(connection: self, message: message).fail(name: "org.freedesktop.DBus.Error.InvalidArgs",
                                                                         "the call's arguments cannot be read")
                return 1
            }
            let call = BusIncomingCall(connection: self, message: message, decoded: decoded)
            guard handler(call) else {
                call.relinquish()  // sd-bus answers UnknownMethod
                return 0
            }
            return 1
        }
        try register(callback) { bus, slot, userdata throws(BusError) in
            let added = tether_bus_add_object(bus, &slot, path, busCallbackEntry, userdata)
            if added < 0 { throw BusError.errno(added, "cannot export \(path)") }
        }
        exported[path] = callback
        return BusSubscription(connection: self, callback: callback)
    }

    /// Ends the connection; no closure is called after it.
    package func close() {
        close(reason: nil)
    }

    // MARK: - Inside

    func send(_ message: OpaquePointer, _ what: String) throws(BusError) {
        guard let bus else { throw BusError("the bus connection is closed") }
        let sent = tether_bus_send(bus, message)
        if sent < 0 { throw BusError.errno(sent, "cannot send \(what)") }
        rearm()
    }

    func release(_ callback: BusCallback) {
        guard callbacks.removeValue(forKey: ObjectIdentifier(callback)) != nil else { return }
        if let path = exported.first(where: { $0.value === callback })?.key { exported[path] = nil }
        tether_bus_slot_unref(callback.slot)
        callback.slot = nil
        callback.body = nil
    }

    /// A method call with no destination, to an exported object: its
    /// callback's (a filter's answer: 1 taken).
    private func peerCall(_ message: OpaquePointer) -> Int32 {
        guard Int(tether_bus_message_type(message)) == TETHER_BUS_METHOD_CALL, tether_bus_message_destination(message) == nil,
              let path = tether_bus_message_path(message), let callback = exported[String(cString: path)] else { return 0 }
        return callback.body?(message) ?? 0
    }

    private func methodCall(destination: String?, path: String, interface: String?, member: String,
                            _ arguments: [BusValue]) throws(BusError) -> OpaquePointer {
        guard let bus else { throw BusError("the bus connection is closed") }
        var message: OpaquePointer?
        let made = tether_bus_new_method_call(bus, &message, destination, path, interface, member)
        guard made >= 0, let message else { throw BusError.errno(made, "cannot make the call \(member)") }
        do {
            try BusCoding.append(arguments, to: message)
        } catch {
            tether_bus_message_unref(message)
            throw error
        }
        return message
    }

    private func register(_ callback: BusCallback,
                          _ make: (OpaquePointer, inout OpaquePointer?, UnsafeMutableRawPointer) throws(BusError) -> Void)
        throws(BusError) {
        guard let bus else { throw BusError("the bus connection is closed") }
        var slot: OpaquePointer?
        try make(bus, &slot, Unmanaged.passUnretained(callback).toOpaque())
        callback.slot = slot
        callbacks[ObjectIdentifier(callback)] = callback
    }

    private func close(reason: BusError?) {
        guard bus != nil else { return }
        if dispatching {
            if closeAfterDispatch == nil { closeAfterDispatch = .some(reason) }
            return
        }
        for callback in callbacks.values {
            tether_bus_slot_unref(callback.slot)
            callback.slot = nil
            callback.body = nil
        }
        callbacks = [:]
        exported = [:]
        watcher?.close()
        watcher = nil
        timer.close()
        tether_bus_close(bus)
        bus = nil
        if let stopRegistration { loop.forgetStopping(stopRegistration) }
        stopRegistration = nil
        defer { retained?.release() }
        let told = onClose
        onClose = nil
        if let reason { told?(reason) }
    }

    /// Lets sd-bus read, write and call back, a bounded number of messages.
    private func dispatch() {
        guard let bus else { return }
        dispatching = true
        var more = false
        var failure: Int32 = 0
        for _ in 0..<Self.dispatchesPerTurn {
            let result = tether_bus_process(bus)
            if result < 0 { failure = result; break }
            if closeAfterDispatch != nil { break }
            more = result > 0
            if !more { break }
        }
        dispatching = false
        if let pending = closeAfterDispatch {
            closeAfterDispatch = nil
            return close(reason: pending)
        }
        if failure < 0 || tether_bus_is_open(bus) <= 0 {
            return close(reason: failure < 0 ? BusError.errno(failure, "the bus connection ended")
                                             : BusError("the bus connection ended"))
        }
        // More is waiting: taken on the loop's next turn, after the other
        // handles' I/O. Not by a 0 ms timer: libuv before 1.45 runs a timer
        // restarted from its own callback again in the same pass, so a
        // flood would keep the loop from everything else until it ended.
        // One such turn queued at a time, the socket unwatched meanwhile:
        // a level-triggered poll would dispatch more in the same turn.
        if more {
            watcher?.stop()
            guard !turnQueued else { return }
            turnQueued = true
            loop.execute { [weak self] in
                self?.turnQueued = false
                self?.dispatch()
            }
        } else {
            rearm()
        }
    }

    /// Watches for what sd-bus now wants: its socket's events and its timeout.
    private func rearm() {
        // A queued turn rearms when it has run.
        guard let bus, let watcher, !dispatching, !turnQueued else { return }
        let wanted = tether_bus_events(bus)
        var events: PollWatcher.Events = [.disconnect]
        if wanted & 0x001 != 0 { events.insert(.readable) }  // POLLIN
        if wanted & 0x004 != 0 { events.insert(.writable) }  // POLLOUT
        do {
            try watcher.start(events) { [unowned self] _ in self.dispatch() }
        } catch {
            return close(reason: BusError("cannot watch the bus: \(error)"))
        }
        var deadline: UInt64 = .max
        guard tether_bus_timeout(bus, &deadline) >= 0, deadline != .max else { return timer.stop() }
        let now = MonotonicClock.nanoseconds() / 1_000
        let milliseconds = deadline > now ? (deadline - now + 999) / 1_000 : 0
        timer.start(afterMilliseconds: milliseconds) { [unowned self] in self.dispatch() }
    }
}

/// What sd-bus calls: the closure its userdata names.
final class BusCallback {
    var body: ((OpaquePointer) -> Int32)?
    var slot: OpaquePointer?
}

let busCallbackEntry: tether_bus_handler = { message, userdata, _ in
    guard let message, let userdata else { return 0 }
    return Unmanaged<BusCallback>.fromOpaque(userdata).takeUnretainedValue().body?(message) ?? 0
}

/// A match or an exported object; cancelled explicitly or with its connection.
package final class BusSubscription {
    private weak var connection: BusConnection?
    private let callback: BusCallback

    init(connection: BusConnection, callback: BusCallback) {
        self.connection = connection
        self.callback = callback
    }

    package func cancel() { connection?.release(callback) }
}
