import Foundation
import Testing
import TetherTestSupport

/// The example extensions use the broker: the widget shows orders with a
/// token the host refreshes for it, the notification extension fetches the
/// order a push names, and both see a session end at once.
@Suite(.timed) struct ExtensionTokenTests {
    @Test func widgetShowsOrdersThroughTheHostAndSeesTheSessionEnd() throws {
        let fixture = try HostFixture()
        let server = try DemoServer(in: fixture.group.dir)
        try server.loginExpired(fixture.group)
        #expect(try fixture.group.run(["defaults", "set", "orders.url", "\"\(server.baseURL)/orders\""]).status == 0)
        let object: [String: Any] = ["name": "orders", "role": "widget", "executable": exampleExecutable("example-widget"),
                                     "arguments": ["--entries", "1", "--policy", "never"]]
        try JSONSerialization.data(withJSONObject: object)
            .write(to: URL(fileURLWithPath: "\(fixture.extensions)/orders.extension.json"))
        try fixture.withHost { host in
            let lines = try host.expectLineStarting("[orders] shows: ", containing: "orders: 1041 delivered, 1042 shipped, 1043 packing")
            #expect(!lines.isEmpty)
            #expect(try server.counters()["refreshes"] == 1, "the expired token was refreshed once, by the host")

            #expect(try fixture.group.run(["logout"]).status == 0)
            _ = try host.expectLineStarting("[orders] shows: ", containing: "orders: signed out")

            // A notification extension fetches the order a push names.
            #expect(try server.login(fixture.group).status == 0)
            let byHand = try TestProcess(exampleExecutable("example-notification"), ["--group", fixture.group.path, "--name", "notify-by-hand"])
            defer { byHand.stopAlways() }
            _ = try byHand.expectLineStarting("attached to host pid")
            let push = try fixture.group.run(["push", "--json", #"{"title":"Order update","orderId":"1042"}"#])
            #expect(push.status == 0, "\(push.stderr)")
            #expect(push.stdout.contains("Order 1042: Pour-over kettle is shipped"), "\(push.stdout)")
        }
    }
}
