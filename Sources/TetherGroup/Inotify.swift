#if os(Linux)
import Glibc
import Synchronization
import SystemPackage
import TetherLoop

/// The watches of one user of inotify (`LockWatcher`, `StoreWatcher`, the
/// sandbox's disk usage), over the one inotify instance its loop shares
/// with every other user on it (`SharedInotify`): a process holds one
/// instance however much it watches, where the user may have 128 in all.
/// Create, `watch` paths, `start`, and `close` on the loop's thread.
package final class Inotify {
    private let shared: SharedInotify
    /// This user's watches and the events it asked for on each.
    fileprivate var masks: [Int32: UInt32] = [:]
    fileprivate var onEvents: (([Event]) -> Void)?
    private var closed = false

    package init(loop: EventLoop) throws(Errno) {
        shared = try SharedInotify.joined(on: loop)
    }

    /// The watch descriptor (the same for a path already watched, by this
    /// user or another on the loop).
    @discardableResult
    package func watch(_ path: String, mask: UInt32) throws(Errno) -> Int32 {
        let descriptor = try shared.watch(path, mask: mask, for: self)
        masks[descriptor, default: 0] |= mask
        return descriptor
    }

    /// The watches this user holds: each ends with `unwatch`, or when the
    /// kernel drops it (IN_IGNORED: its file went).
    package var watchCount: Int { masks.count }

    package func unwatch(_ descriptor: Int32) {
        guard masks.removeValue(forKey: descriptor) != nil else { return }
        shared.unwatch(descriptor, for: self)
    }

    /// One event: its watch, mask, and the name of the entry in a watched
    /// directory (empty for the watched object itself).
    package struct Event: Sendable {
        package let descriptor: Int32
        package let mask: UInt32
        package let name: String
    }

    /// Calls `onEvents` with this user's pending events, in order, each
    /// time some arrive: those on its watches that it asked for, and the
    /// ones inotify sends unasked (IN_IGNORED, IN_Q_OVERFLOW).
    package func start(_ onEvents: @escaping ([Event]) -> Void) throws(Errno) {
        self.onEvents = onEvents
    }

    package func close() {
        guard !closed else { return }
        closed = true
        onEvents = nil
        for descriptor in masks.keys { shared.unwatch(descriptor, for: self) }
        masks.removeAll()
        shared.leave()
    }
}

/// The one inotify instance of a loop: made by its first user, closed with
/// its last. Events go to the users watching their descriptor.
final class SharedInotify: @unchecked Sendable {
    private static let byLoop = Mutex<[ObjectIdentifier: SharedInotify]>([:])

    private let loop: EventLoop
    private let fd: Int32
    private let poller: PollWatcher
    private var buffer = [UInt8](repeating: 0, count: 4096)
    private var users = 0
    /// Who watches each descriptor.
    private var watchers: [Int32: [ObjectIdentifier: Inotify]] = [:]

    /// The loop's instance, made if it has none; the caller is one more user.
    static func joined(on loop: EventLoop) throws(Errno) -> SharedInotify {
        let result: Result<SharedInotify, Errno> = byLoop.withLock { table in
            if let existing = table[ObjectIdentifier(loop)] {
                existing.users += 1
                return .success(existing)
            }
            do throws(Errno) {
                let made = try SharedInotify(loop: loop)
                made.users = 1
                table[ObjectIdentifier(loop)] = made
                return .success(made)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private init(loop: EventLoop) throws(Errno) {
        self.loop = loop
        fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { throw Errno(rawValue: errno) }
        do {
            poller = try PollWatcher(loop: loop, fileDescriptor: fd)
            try poller.start(.readable) { [unowned self] _ in self.deliver(self.drain()) }
        } catch {
            Syscall.close(fd)
            throw error
        }
    }

    /// IN_MASK_ADD: another user's events on the same path are kept.
    func watch(_ path: String, mask: UInt32, for user: Inotify) throws(Errno) -> Int32 {
        let descriptor = try Syscall.check { inotify_add_watch(fd, path, mask | UInt32(IN_MASK_ADD)) }
        watchers[descriptor, default: [:]][ObjectIdentifier(user)] = user
        return descriptor
    }

    func unwatch(_ descriptor: Int32, for user: Inotify) {
        watchers[descriptor]?[ObjectIdentifier(user)] = nil
        guard watchers[descriptor]?.isEmpty == true else { return }
        watchers[descriptor] = nil
        _ = inotify_rm_watch(fd, descriptor)
    }

    /// One user fewer; the last one closes the instance.
    func leave() {
        let last: Bool = Self.byLoop.withLock { table in
            users -= 1
            guard users == 0 else { return false }
            table[ObjectIdentifier(loop)] = nil
            return true
        }
        guard last else { return }
        poller.close()
        Syscall.close(fd)
    }

    private func deliver(_ events: [Inotify.Event]) {
        var batches: [ObjectIdentifier: (user: Inotify, events: [Inotify.Event])] = [:]
        let unasked = UInt32(IN_IGNORED | IN_Q_OVERFLOW | IN_UNMOUNT)
        for event in events {
            let recipients = event.mask & UInt32(IN_Q_OVERFLOW) != 0
                ? watchers.values.reduce(into: [:]) { $0.merge($1) { old, _ in old } }
                : watchers[event.descriptor] ?? [:]
            for (key, user) in recipients {
                let asked = user.masks[event.descriptor] ?? 0
                guard event.mask & (asked | unasked) != 0 else { continue }
                batches[key, default: (user, [])].events.append(event)
            }
            // The kernel dropped the watch (its file went): so do we, and
            // so do its users, or each directory made and removed under a
            // watched tree would stay in their tables for good.
            if event.mask & UInt32(IN_IGNORED) != 0 {
                for user in (watchers[event.descriptor] ?? [:]).values { user.masks[event.descriptor] = nil }
                watchers[event.descriptor] = nil
            }
        }
        for (_, batch) in batches { batch.user.onEvents?(batch.events) }
    }

    private func drain() -> [Inotify.Event] {
        var events: [Inotify.Event] = []
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return events }
            var offset = 0
            // struct inotify_event: wd, mask, cookie, len, then a NUL-padded name of `len` bytes.
            while offset + 16 <= n {
                let descriptor = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: Int32.self) }
                let mask = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self) }
                let length = Int(buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self) })
                let name = buffer[(offset + 16)..<min(n, offset + 16 + length)].prefix { $0 != 0 }
                events.append(Inotify.Event(descriptor: descriptor, mask: mask, name: String(decoding: name, as: UTF8.self)))
                offset += 16 + length
            }
        }
    }
}
#endif
