import Foundation
import Testing
@testable import TetherExtension
import TetherIPC
import TetherTestSupport

@Suite(.timed) struct ExtensionIdentityTests {
    @Test func startedByHandTakesItsGroupAndNameFromTheCommandLine() throws {
        let dir = try TemporaryDirectory("tether-ext")
        let identity = try ExtensionIdentity.resolve(
            role: .widget, arguments: ["/usr/bin/Clock-Widget", "--every", "5", "--group", dir.group, "--policy", "never"],
            environment: ["TETHER_HOST_PID": "42"])
        #expect(identity.name == "clock-widget")
        #expect(identity.group.path == dir.group)
        #expect(identity.arguments == ["--every", "5", "--policy", "never"])
        #expect(!identity.isManaged, "--group means started by hand")
        #expect(identity.socketPath == dir.group + "/host.sock")
    }

    /// Managed only with a link the kernel says the named host made: a
    /// shell that exported the variables, or a descriptor that is not the
    /// host's socket pair, does not make a process managed.
    @Test func aHostsChildIsManagedOnlyWithTheHostsLink() throws {
        let dir = try TemporaryDirectory("tether-ext")
        let link = try LaunchLink.pair()  // made by this process: it is the "host" here
        var pipeEnds: [Int32] = [-1, -1]
        #expect(pipe(&pipeEnds) == 0)
        defer { for fd in [link.host, link.child] + pipeEnds { close(fd) } }
        func resolve(hostPID: Int32, fd: Int32) throws -> ExtensionIdentity {
            try ExtensionIdentity.resolve(role: .widget, arguments: ["w"], environment: [
                "TETHER_GROUP": dir.group, "TETHER_EXTENSION": "orders", "TETHER_ROLE": "widget",
                "TETHER_HOST_PID": String(hostPID), "TETHER_HOST_FD": String(fd), "TETHER_OPEN_ACCESS": "1"])
        }
        #expect(fcntl(link.child, F_SETFD, 0) == 0)  // as the child finds it after exec
        let child = try resolve(hostPID: getpid(), fd: link.child)
        #expect(child.name == "orders")
        #expect(child.parentHostPID == getpid())
        #expect(child.hostLink == link.child)
        #expect(child.openAccess)
        #expect(fcntl(link.child, F_GETFD) & FD_CLOEXEC != 0, "the SDK's own children do not inherit the link")
        #expect(try resolve(hostPID: getppid(), fd: link.child).parentHostPID == nil, "another pid's variables")
        #expect(try resolve(hostPID: getpid(), fd: pipeEnds[0]).parentHostPID == nil, "a pipe is no link")
        #expect(try resolve(hostPID: getpid(), fd: -1).parentHostPID == nil, "no descriptor")
    }

    @Test func badNamesAndRolesAreRefused() throws {
        let dir = try TemporaryDirectory("tether-ext")
        #expect(throws: ExtensionError.invalidName("Bad Name")) {
            try ExtensionIdentity.resolve(role: .keyboard, arguments: ["k", "--name", "Bad Name", "--group", dir.group],
                                          environment: [:])
        }
        #expect(throws: ExtensionError.self) {
            try ExtensionIdentity.resolve(role: .keyboard, arguments: ["k"],
                                          environment: ["TETHER_GROUP": dir.group, "TETHER_ROLE": "widget"])
        }
        #expect(throws: ExtensionError.self) {
            try ExtensionIdentity.resolve(role: .keyboard, arguments: ["k", "--group"], environment: [:])
        }
    }

    @Test func timelineEntriesAreKeptInDateOrder() {
        let now = Date()
        let timeline = Timeline(entries: [TimelineEntry(date: now.addingTimeInterval(5), content: "later"),
                                          TimelineEntry(date: now, content: "now")], policy: .atEnd)
        #expect(timeline.entries.map(\.content) == ["now", "later"])
    }
}
