import Dispatch
import Glibc
import Testing
import TetherIPC
import TetherLoop
import TetherManifest
@testable import TetherHost

/// The attached extensions and the indexes kept in step with them: a name
/// attached again on a new connection keeps its new entry when the old
/// connection goes; those started by hand are counted; read-only keyboards
/// and notification extensions are found without a walk. (Entries hold
/// real connections, made on a loop's thread, where the registry lives.)
@Suite(.timed) struct AttachmentRegistryTests {
    final class Key {}

    /// What the loop's side saw, read once `done` is signalled.
    final class Seen: @unchecked Sendable {
        var lines: [String] = []
        let done = DispatchSemaphore(value: 0)
    }

    static func entry(_ name: String, _ role: ExtensionRole, managed: Bool = true, openAccess: Bool = false,
                      on loop: EventLoop) -> AttachedExtension? {
        var ends: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else { return nil }
        close(ends[1])
        guard let stream = try? PipeStream.adopting(loop: loop, fileDescriptor: ends[0]) else { return nil }
        return AttachedExtension(name: name, role: role, pid: 1, managed: managed, openAccess: openAccess,
                                 timeBudgetMilliseconds: nil, protocolVersion: HostProtocol.current,
                                 connection: RPCConnection(stream: stream, goodbye: nil))
    }

    @Test func indexesFollowAddsAndRemovesAndANameAttachedAgainKeepsItsNewEntry() throws {
        let thread = try EventLoopThread()
        defer { thread.shutdown() }
        let loop = thread.loop
        let seen = Seen()
        loop.execute {
            defer { seen.done.signal() }
            var registry = AttachmentRegistry()
            let (old, new, board, notes) = (Key(), Key(), Key(), Key())
            guard let first = Self.entry("kb", .keyboard, managed: false, on: loop),
                  let clock = Self.entry("clock", .widget, on: loop),
                  let notification = Self.entry("notes", .notification, on: loop),
                  let second = Self.entry("kb", .keyboard, managed: false, openAccess: true, on: loop) else {
                return seen.lines.append("no connection")
            }
            func look(_ label: String) {
                seen.lines.append("\(label): by hand \(registry.byHandCount), read-only \(registry.readOnlyKeyboards.map(\.name)), "
                                  + "notifications \(registry.notifications.map(\.name)), "
                                  + "kb \(registry.connection(named: "kb") == ObjectIdentifier(new) ? "new" : registry.connection(named: "kb") == nil ? "none" : "old") "
                                  + "open \(registry[name: "kb"]?.openAccess == true)")
            }
            registry.add(first, ObjectIdentifier(old))
            registry.add(clock, ObjectIdentifier(board))
            registry.add(notification, ObjectIdentifier(notes))
            look("three")
            // The keyboard again, on a new connection, before the old one goes.
            registry.add(second, ObjectIdentifier(new))
            look("again")
            seen.lines.append("removed \(registry.remove(ObjectIdentifier(old))?.name ?? "nothing")")
            look("old gone")
            seen.lines.append("removed \(registry.remove(ObjectIdentifier(old))?.name ?? "nothing")")
            _ = registry.remove(ObjectIdentifier(notes))
            look("notes gone")
            seen.lines.append("names \(registry.names.sorted())")
            for entry in [first, clock, notification, second] { entry.connection.close() }
        }
        #expect(seen.done.wait(timeout: .now() + 10) == .success)
        #expect(seen.lines == [
            "three: by hand 1, read-only [\"kb\"], notifications [\"notes\"], kb old open false",
            "again: by hand 2, read-only [\"kb\"], notifications [\"notes\"], kb new open true",
            "removed kb",
            "old gone: by hand 1, read-only [], notifications [\"notes\"], kb new open true",
            "removed nothing",
            "notes gone: by hand 1, read-only [], notifications [], kb new open true",
            "names [\"clock\", \"kb\"]",
        ])
    }
}
