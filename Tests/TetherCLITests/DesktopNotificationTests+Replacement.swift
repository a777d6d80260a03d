import Foundation
import Testing
import TetherTestSupport

extension DesktopNotificationTests {
    /// A notification server of the test's own (jeepney, on a private bus),
    /// printing "owner CODE" once it asked for the name: `first` lets
    /// another take the name over, `replacing` takes it over, and answers
    /// the host's question of who it is only when told ("answer" on its
    /// input), then says an action was invoked on the last notification.
    static let server = """
        import sys, threading
        from jeepney import DBusAddress, MessageType, new_method_return, new_signal
        from jeepney.bus_messages import message_bus
        from jeepney.io.blocking import open_dbus_connection
        address, mode = sys.argv[1], sys.argv[2]
        bus = open_dbus_connection(bus=address)
        sending = threading.Lock()  # jeepney's blocking connection is one thread's
        def send(message):
            with sending:
                bus.send(message)
        name = "org.freedesktop.Notifications"
        reply = bus.send_and_get_reply(message_bus.RequestName(name, 1 if mode == "first" else 2))
        print("owner", reply.body[0], flush=True)
        notifications = DBusAddress("/org/freedesktop/Notifications", interface=name)
        held, asked_capabilities, last = [], threading.Event(), [0]
        def answer_when_told():
            for line in sys.stdin:
                if line.strip() == "answer" and held:
                    send(new_method_return(held.pop(), "ssss", ("fake-" + mode, "tether-tests", "1", "1.2")))
                    asked_capabilities.wait(5)
                    send(new_signal(notifications, "ActionInvoked", "us", (last[0], "default")))
                    print("invoked", last[0], flush=True)
        threading.Thread(target=answer_when_told, daemon=True).start()
        while True:
            message = bus.receive()
            if message.header.message_type != MessageType.method_call:
                continue
            member = message.header.fields.get(3)
            if member == "GetServerInformation" and mode == "replacing" and not asked_capabilities.is_set():
                held.append(message)
                print("asked", flush=True)
            elif member == "GetServerInformation":
                send(new_method_return(message, "ssss", ("fake-" + mode, "tether-tests", "1", "1.2")))
            elif member == "GetCapabilities":
                send(new_method_return(message, "as", (["actions", "body"],)))
                asked_capabilities.set()
            elif member == "Notify":
                last[0] += 1
                print("notify replacing", message.body[1], "as", last[0], flush=True)
                send(new_method_return(message, "u", (last[0],)))
            else:
                send(new_method_return(message))
        """

    /// A host on a private bus whose notification server is `server` in
    /// mode "first" (another may take the name over), known to the host.
    func withFirstServer(_ body: (HostFixture, PrivateBus, String, TestProcess, TestProcess) throws -> Void) throws {
        let fixture = try HostFixture()
        let bus = try PrivateBus(in: fixture.group.dir.path)
        defer { bus.stopAlways() }
        let python = try PythonEnvironment.python()
        let first = try TestProcess(python, ["-c", Self.server, bus.address, "first"])
        defer { first.stopAlways() }
        _ = try first.expectLine("owner 1", timeout: 60)
        try fixture.withHost(environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address]) { host in
            _ = try host.expectLineStarting("desktop notifications: shown via fake-first", timeout: 30)
            try body(fixture, bus, python, first, host)
        }
    }

    /// The server replaced by another (one that takes the name over) while
    /// a push is shown: the host asks the new one who it is and, meanwhile,
    /// shows a push there; the answer to its question still counts, so the
    /// new server's signals are believed and the push's action comes back.
    @Test func aServerReplacedWhileAPushIsShownIsBelieved() throws {
        try withFirstServer { fixture, bus, python, _, host in
            let replacing = try TestProcess(python, ["-c", Self.server, bus.address, "replacing"])
            defer { replacing.stopAlways() }
            _ = try replacing.expectLine("owner 1", timeout: 60)
            // The host asks the new owner who it is; its answer waits.
            _ = try replacing.expectLine("asked", timeout: 20)
            let waiting = try fixture.group.start(["push", "--wait", #"{"title":"Pay","actions":[{"key":"default","label":"Open"}]}"#])
            defer { waiting.stopAlways() }
            let shown = try waiting.expectLineStarting("shown on the desktop as notification ")
            let notification = try #require(shown.last?.split(separator: " ").last.flatMap { Int($0) })
            replacing.writeStdin("answer\n")
            _ = try replacing.expectLine("invoked \(notification)", timeout: 20)
            #expect(try waiting.waitForExit(timeout: 10) == 0, "the new server's action was not believed")
            #expect(try waiting.remainingOutput() == "notification \(notification): action default\n")
        }
    }

    /// The server restarts (the daemon ended, another took the name): it
    /// counts its ids from 1 again, and they are its, not the host's. A
    /// push with the payload id of one shown before is a new notification
    /// there, not a replacement of whatever has that number now (another
    /// application's, as likely as not).
    @Test func aRestartedServerIsNotAskedToReplaceWhatTheLastOneShowed() throws {
        try withFirstServer { fixture, bus, python, first, host in
            #expect(try push(fixture, #"{"id":"order-1","title":"Packed"}"#).notification == 1)
            _ = try first.expectLine("notify replacing 0 as 1")
            // The same id again, to the same server: a replacement.
            #expect(try push(fixture, #"{"id":"order-1","title":"Sealed"}"#).notification == 2)
            _ = try first.expectLine("notify replacing 1 as 2")
            first.stopAlways()
            _ = try host.expectLineStarting("desktop notifications: not shown", timeout: 30)
            let second = try TestProcess(python, ["-c", Self.server, bus.address, "second"])
            defer { second.stopAlways() }
            _ = try second.expectLine("owner 1", timeout: 60)
            _ = try host.expectLineStarting("desktop notifications: shown via fake-second", timeout: 30)
            #expect(try push(fixture, #"{"id":"order-1","title":"Shipped"}"#).notification == 1)
            _ = try second.expectLine("notify replacing 0 as 1")
        }
    }
}
