import Testing
import TetherIPC

/// The wire's spellings, pinned: every other test (the host's, the CLI's,
/// the raw frames and Python fixtures) names methods and events by these
/// constants, so a renamed constant, which would break shell and Python
/// extensions and clients of other releases, fails here.
@Suite struct WireNamesTests {
    @Test func everyMethodAndEventIsSpelledAsOnTheWire() {
        let methods: [(String, String)] = [
            (HostMethod.ping, "host.ping"), (HostMethod.status, "host.status"), (HostMethod.featureStart, "feature.start"),
            (HostMethod.featureStop, "feature.stop"), (HostMethod.featureList, "feature.list"), (HostMethod.hello, "extension.hello"),
            (HostMethod.extensionStart, "extension.start"), (HostMethod.extensionStop, "extension.stop"),
            (HostMethod.extensionList, "extension.list"), (HostMethod.push, "push.send"), (HostMethod.reload, "widget.reload"),
            (HostMethod.defaultsChanged, "defaults.changed"), (HostMethod.tokenGet, "token.get"), (HostMethod.metrics, "host.metrics"),
            (HostMethod.subscribe, "host.subscribe"), (HostMethod.widgetEntry, "widget.entry"), (HostMethod.widgetWatch, "widget.watch"),
        ]
        for (constant, wire) in methods { #expect(constant == wire) }
        #expect(HostMethod.all == Set(methods.map(\.1)), "every request method is pinned here")
        let events: [(String, String)] = [
            (HostNotification.stopping, "host.stopping"), (HostNotification.featureChanged, "feature.changed"),
            (HostNotification.extensionChanged, "extension.changed"), (HostNotification.storeChanged, "store.changed"),
            (HostNotification.reload, "widget.reload"), (HostNotification.defaultsChanged, "defaults.changed"),
            (HostNotification.widgetChanged, "widget.changed"), (HostNotification.notificationClosed, "notification.closed"),
            (HostNotification.notificationAction, "notification.action"), (HostNotification.willTerminate, "extension.willTerminate"),
            (HostNotification.disconnecting, "host.disconnecting"),
            (ExtensionMethod.receivePush, "notification.receive"), (ExtensionMethod.ping, "extension.ping"),
        ]
        for (constant, wire) in events { #expect(constant == wire) }
    }
}
