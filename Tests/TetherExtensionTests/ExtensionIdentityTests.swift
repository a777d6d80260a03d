import Foundation
import Testing
import TetherExtension
import TetherTestSupport

@Suite(.timed) struct ExtensionIdentityTests {
    @Test func startedByHandTakesItsGroupAndNameFromTheCommandLine() throws {
        let dir = try TemporaryDirectory("tether-ext")
        let identity = try ExtensionIdentity.resolve(
            role: .widget, arguments: ["/usr/bin/Clock-Widget", "--every", "5", "--group", dir.group, "--policy", "never"],
            environment: ["TETHER_HOST_PID": "42"], parentPID: 42)
        #expect(identity.name == "clock-widget")
        #expect(identity.group.path == dir.group)
        #expect(identity.arguments == ["--every", "5", "--policy", "never"])
        #expect(!identity.isManaged, "--group means started by hand")
        #expect(identity.socketPath == dir.group + "/host.sock")
    }

    @Test func aHostsChildIsManagedOnlyIfTheHostIsItsParent() throws {
        let dir = try TemporaryDirectory("tether-ext")
        let environment = ["TETHER_GROUP": dir.group, "TETHER_EXTENSION": "orders", "TETHER_ROLE": "widget",
                           "TETHER_HOST_PID": "42", "TETHER_SOCKET": dir.group + "/host.sock", "TETHER_OPEN_ACCESS": "1"]
        let child = try ExtensionIdentity.resolve(role: .widget, arguments: ["w"], environment: environment, parentPID: 42)
        #expect(child.name == "orders")
        #expect(child.parentHostPID == 42)
        #expect(child.openAccess)
        let stray = try ExtensionIdentity.resolve(role: .widget, arguments: ["w"], environment: environment, parentPID: 7)
        #expect(stray.parentHostPID == nil, "an inherited TETHER_HOST_PID does not make a shell's child managed")
    }

    @Test func badNamesAndRolesAreRefused() throws {
        let dir = try TemporaryDirectory("tether-ext")
        #expect(throws: ExtensionError.invalidName("Bad Name")) {
            try ExtensionIdentity.resolve(role: .keyboard, arguments: ["k", "--name", "Bad Name", "--group", dir.group],
                                          environment: [:], parentPID: 1)
        }
        #expect(throws: ExtensionError.self) {
            try ExtensionIdentity.resolve(role: .keyboard, arguments: ["k"],
                                          environment: ["TETHER_GROUP": dir.group, "TETHER_ROLE": "widget"], parentPID: 1)
        }
        #expect(throws: ExtensionError.self) {
            try ExtensionIdentity.resolve(role: .keyboard, arguments: ["k", "--group"], environment: [:], parentPID: 1)
        }
    }

    @Test func timelineEntriesAreKeptInDateOrder() {
        let now = Date()
        let timeline = Timeline(entries: [TimelineEntry(date: now.addingTimeInterval(5), content: "later"),
                                          TimelineEntry(date: now, content: "now")], policy: .atEnd)
        #expect(timeline.entries.map(\.content) == ["now", "later"])
    }
}
