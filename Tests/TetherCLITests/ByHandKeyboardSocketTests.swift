import Foundation
import Testing
import TetherTestSupport
import TetherIPC

/// A keyboard without open access started by hand attaches before it
/// confines itself and keeps no `socket(AF_UNIX)` afterwards: code inside
/// it reaches no host's socket (its own group's or another's), and speaks
/// on its own connection only as the read-only keyboard. It attaches only
/// when it starts, and says so; writable roles still re-attach.
@Suite(.timed) struct ByHandKeyboardSocketTests {
    /// Written raw onto the SDK's own connection, with ids the SDK never
    /// uses (its are numbers): the host's refusals must not be taken for
    /// the answers to the SDK's own calls on that connection.
    static let stop = #"{"jsonrpc":"2.0","id":"raw-stop","method":"\#(HostMethod.extensionStop)","params":{"name":"victim"}}"#
    static let changed = #"{"jsonrpc":"2.0","id":"raw-changed","method":"\#(HostMethod.defaultsChanged)","params":{"keys":["typed"]}}"#

    /// A host whose shell widget "victim" it launched itself; its pid.
    func hostWithVictim() throws -> (HostFixture, TestProcess, Int32) {
        let fixture = try HostFixture()
        try fixture.addExtension("victim", script: helloScript)
        let host = try fixture.startHost()
        let lines = try host.expectLineStarting("", containing: "hello from victim")
        return (fixture, host, try #require(startedPID("victim", in: lines)))
    }

    func startKeyboard(_ group: TestGroup, environment: [String: String]? = nil) throws -> TestProcess {
        try TestProcess(exampleExecutable("SDKFixture"), ["socket-keyboard", "--group", group.path, "--name", "kb"],
                        environment: environment)
    }

    @Test func itsConfinedCodeReachesNoHostSocketAndItsLinkStaysReadOnly() throws {
        let (own, ownHost, ownVictim) = try hostWithVictim()
        defer { ownHost.signal(SIGTERM) }
        let (other, otherHost, otherVictim) = try hostWithVictim()
        defer { otherHost.signal(SIGTERM) }
        let keyboard = try startKeyboard(own.group)
        defer { keyboard.stopAlways() }
        // A loaded machine may take a while to start it.
        try keyboard.expectLine("attached to host pid \(ownHost.pid) (started by hand)", timeout: 30)

        for fixture in [own, other] {
            let socket = fixture.group.path + "/host.sock"
            for request in [Self.stop, Self.changed] {
                keyboard.writeStdin("connect \(socket) \(request)\n")
                let said = try keyboard.expectLineStarting("connect ").last
                #expect(said == "connect \(socket): socket refused (Operation not permitted)")
            }
        }
        // Its own connection, as a child that inherited it would use it:
        // the host refuses it what it refuses the keyboard.
        keyboard.writeStdin("link \(Self.stop)\nlink \(Self.changed)\n")
        try keyboard.expectLine("link: sent")
        try keyboard.expectLine("link: sent")
        // What its role may do still works, on the same connection (so
        // after the host has handled the lines above).
        keyboard.writeStdin("start recording\n")
        try keyboard.expectLine("started recording: true")
        #expect(try own.group.run(["probe", "feature", "recording"]).status == 0)

        #expect(processAlive(ownVictim) && processAlive(otherVictim), "a host-launched widget was stopped")
        for fixture in [own, other] {
            let listed = try #require(try fixture.status()["extensions"] as? [[String: Any]])
            let victim = listed.first { $0["name"] as? String == "victim" }
            #expect(victim?["state"] as? String == "running", "\(listed)")
        }
        keyboard.closeStdin()
        #expect(try keyboard.waitForExit(timeout: 10) == 0)
    }

    @Test func itSaysOnceItCannotAttachToAnotherHost() throws {
        let group = try TestGroup()
        let first = try group.start(["host", "--grace", "2"])
        #expect(try first.readLine()?.hasPrefix("tether host ready: pid \(first.pid)") == true)
        let keyboard = try startKeyboard(group)
        defer { keyboard.stopAlways() }
        try keyboard.expectLine("attached to host pid \(first.pid) (started by hand)")
        let note = "a keyboard without open access started by hand is confined without Unix sockets, "
            + "so it attaches only when it starts: start it again to attach to a new host"

        first.signal(SIGTERM)
        #expect(try first.waitForExit() == 0)
        try keyboard.expectLine("host pid \(first.pid) stopped; carrying on without a host (\(note))")
        let second = try group.start(["host", "--grace", "2"])
        defer { second.signal(SIGTERM) }
        #expect(try second.readLine()?.hasPrefix("tether host ready: pid \(second.pid)") == true)
        try keyboard.expectLine("a host is running, but this keyboard cannot attach to it; carrying on without a host (\(note))")
        keyboard.writeStdin("start recording\n")
        try keyboard.expectLine("cannot start recording: host is not running")
        keyboard.closeStdin()
        #expect(try keyboard.waitForExit(timeout: 10) == 0)
        let rest = try keyboard.remainingOutput()
        #expect(!rest.contains("cannot attach"), "said once: \(rest)")
    }

    /// With open access it is confined with Unix sockets, and re-attaches.
    @Test func withOpenAccessItStillReattaches() throws {
        let group = try TestGroup()
        let first = try group.start(["host", "--grace", "2"])
        #expect(try first.readLine()?.hasPrefix("tether host ready: pid \(first.pid)") == true)
        let keyboard = try startKeyboard(group, environment: ["TETHER_OPEN_ACCESS": "1"])
        defer { keyboard.stopAlways() }
        try keyboard.expectLine("attached to host pid \(first.pid) (started by hand)")
        first.signal(SIGKILL)
        _ = try first.waitForExit()
        try keyboard.expectLine("lost the connection to host pid \(first.pid); carrying on without a host")
        let second = try group.start(["host", "--grace", "2"])
        defer { second.signal(SIGTERM) }
        #expect(try second.readLine()?.hasPrefix("tether host ready: pid \(second.pid)") == true)
        try keyboard.expectLine("attached to host pid \(second.pid) (started by hand)")
    }
}
