import Foundation
import Testing
import TetherIPC
import TetherTestSupport

/// Delivered pushes on the desktop, against a real notification server:
/// dunst on a session bus and an X display of the test's own
/// (`DesktopSession`). What dunst showed is read back with `dunstctl`.
@Suite(.timed) struct DesktopNotificationTests {
    /// A host in `desktop`'s session, once it says dunst shows its pushes
    /// (and each of `also` has been said too, in whatever order).
    func withDesktopHost<T>(_ fixture: HostFixture, _ desktop: DesktopSession, also: [String] = [],
                            _ body: (TestProcess) throws -> T) throws -> T {
        try fixture.withHost(environment: desktop.environment) { host in
            var missing = ["desktop notifications: shown via dunst"] + also
            while !missing.isEmpty {
                let line = try #require(try host.readLine(timeout: 30), "the host ended before saying \(missing)")
                missing.removeAll { line.hasPrefix($0) }
            }
            return try body(host)
        }
    }

    func push(_ fixture: HostFixture, _ payload: String) throws -> (notification: Int?, answer: [String: Any]) {
        let result = try fixture.group.run(["push", "--json", payload])
        #expect(result.status == 0, "\(result.stderr)")
        let answer = try fixture.group.json(result)
        return ((answer["desktop"] as? [String: Any])?["notification"] as? Int, answer)
    }

    /// The rewrite, not the payload, is what dunst shows, as the group's;
    /// the extension (an SDK one) hears what became of it.
    @Test func aRewrittenPushIsShown() throws {
        let fixture = try HostFixture()
        let desktop = try DesktopSession()
        let manifest = #"{"name":"notify","role":"notification","executable":"\#(exampleExecutable("example-notification"))","activation":"always"}"#
        try writeFile("\(fixture.extensions)/notify.extension.json", manifest)
        try withDesktopHost(fixture, desktop, also: ["[notify] attached to host pid"]) { host in
            let (shown, answer) = try push(fixture, #"{"id":"order-42","title":"Order shipped","body":"No. 42 is on its way"}"#)
            let notification = try #require(shown, "\(answer)")
            try desktop.closeAll()
            // Dismissed (dunstctl close-all): reason 2, to the extension.
            _ = try host.expectLineStarting("[notify] notification order-42: closed (2)")
            let entry = try #require(try desktop.history().first { $0["id"] as? Int == notification })
            #expect(entry["summary"] as? String == "[notify] Order shipped", "\(entry)")
            #expect(entry["body"] as? String == "No. 42 is on its way", "\(entry)")
            #expect(entry["appname"] as? String == "group", "\(entry)")
        }
    }

    /// A push with the id of one still shown replaces it: the same server
    /// id, one notification, the newer text.
    @Test func anUpdateReplacesTheEarlierNotification() throws {
        let fixture = try HostFixture()
        let desktop = try DesktopSession()
        try withDesktopHost(fixture, desktop) { _ in
            let first = try #require(try push(fixture, #"{"id":"order-42","title":"Packed","body":"No. 42"}"#).notification)
            let second = try push(fixture, #"{"id":"order-42","title":"Shipped","body":"No. 42","urgency":"critical"}"#).notification
            #expect(second == first)
            // Another id is another notification.
            let other = try push(fixture, #"{"id":"order-43","title":"Packed","body":"No. 43"}"#).notification
            #expect(other != first)
            #expect(try desktop.displayed() == 2)
            try desktop.closeAll()
            let history = try desktop.history()
            #expect(history.filter { $0["id"] as? Int == first }.count == 1, "\(history)")
            let entry = try #require(history.first { $0["id"] as? Int == first })
            #expect(entry["summary"] as? String == "Shipped")
            // Critical: dunst keeps it until closed (its timeout 0).
            #expect(entry["timeout"] as? Int == 0, "\(entry)")
        }
    }

    /// Markup in a title or body reaches a server that reads markup
    /// escaped (dunst keeps the text it was sent, entities and all), and
    /// one that does not as the plain text it is.
    @Test func markupInATitleOrBodyArrivesEscaped() throws {
        let payload = #"{"title":"<b>Sale</b> & more","body":"<a href=\"http://evil\">click</a> <i>now</i>","category":"im"}"#
        for markup in ["full", "no"] {
            let fixture = try HostFixture()
            let desktop = try DesktopSession(markup: markup)
            try withDesktopHost(fixture, desktop) { _ in
                let notification = try #require(try push(fixture, payload).notification)
                try desktop.closeAll()
                let entry = try #require(try desktop.history().first { $0["id"] as? Int == notification })
                if markup == "full" {
                    #expect(entry["summary"] as? String == "&lt;b&gt;Sale&lt;/b&gt; &amp; more", "\(entry)")
                    #expect(entry["body"] as? String
                            == "&lt;a href=&quot;http://evil&quot;&gt;click&lt;/a&gt; &lt;i&gt;now&lt;/i&gt;", "\(entry)")
                } else {
                    #expect(entry["summary"] as? String == "<b>Sale</b> & more", "\(entry)")
                    #expect(entry["body"] as? String == #"<a href="http://evil">click</a> <i>now</i>"#, "\(entry)")
                }
                #expect(entry["category"] as? String == "im", "\(entry)")
            }
        }
    }

    /// `push --wait` ends with the notification's end: closed by a
    /// CloseNotification call (reason 3), or expired (reason 1).
    @Test func aCloseAndAnExpiryComeBackWithTheirReasons() throws {
        let fixture = try HostFixture()
        let desktop = try DesktopSession()
        try withDesktopHost(fixture, desktop) { _ in
            let waiting = try fixture.group.start(["push", "--wait", #"{"id":"a","title":"Closed by a call"}"#])
            defer { waiting.stopAlways() }
            let shown = try waiting.expectLineStarting("shown on the desktop as notification ")
            let notification = try #require(shown.last?.split(separator: " ").last.flatMap { Int($0) })
            try desktop.closeNotification(notification)
            #expect(try waiting.waitForExit(timeout: 20) == 0)
            #expect(try waiting.remainingOutput()
                    == "notification \(notification) (id a): closed, closed by a CloseNotification call (3)\n")

            // Well before dunst's own default (10 s): the expiry asked for is what ends it.
            let expired = try fixture.group.run(["push", "--wait", "--timeout", "5", "--json", #"{"title":"Brief","expiryMilliseconds":200}"#])
            #expect(expired.status == 0, "\(expired.stderr)")
            let event = try #require(try fixture.group.json(expired)["event"] as? [String: Any])
            #expect(event["event"] as? String == HostNotification.notificationClosed, "\(event)")
            #expect(event["reason"] as? Int == 1, "\(event)")
        }
    }

    /// An action invoked on the desktop comes back as an event: to `push
    /// --wait`, and to `watch notifications`, which says first that
    /// pushes are shown.
    @Test func anInvokedActionComesBackAsAnEvent() throws {
        let fixture = try HostFixture()
        let desktop = try DesktopSession()
        try withDesktopHost(fixture, desktop) { _ in
            let watch = try fixture.group.start(["watch", "notifications", "--json"])
            defer { watch.stopAlways() }
            #expect(try watch.readLine(timeout: 20)?.contains(#""state":"shown""#) == true)
            let waiting = try fixture.group.start(["push", "--wait", #"{"id":"o7","title":"Order 7","actions":[{"key":"default","label":"Open"},{"key":"later","label":"Later"}]}"#])
            defer { waiting.stopAlways() }
            let shown = try waiting.expectLineStarting("shown on the desktop as notification ")
            let notification = try #require(shown.last?.split(separator: " ").last.flatMap { Int($0) })
            try desktop.invokeAction(0)
            #expect(try waiting.waitForExit(timeout: 20) == 0)
            #expect(try waiting.remainingOutput() == "notification \(notification) (id o7): action default\n")
            let line = try #require(try watch.readLine(timeout: 20))
            let event = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(event["event"] as? String == HostNotification.notificationAction && event["action"] as? String == "default"
                    && event["notification"] as? Int == notification && event["id"] as? String == "o7", "\(line)")
        }
    }

    /// A signal from anyone but the server that owns the name is not
    /// believed: a forged `ActionInvoked` for the host's own notification
    /// tells nothing, and the real action after it is what comes back.
    @Test func aForgedSignalIsIgnored() throws {
        let fixture = try HostFixture()
        let desktop = try DesktopSession()
        try withDesktopHost(fixture, desktop) { _ in
            let waiting = try fixture.group.start(["push", "--wait", #"{"title":"Pay","actions":[{"key":"default","label":"Open"}]}"#])
            defer { waiting.stopAlways() }
            let shown = try waiting.expectLineStarting("shown on the desktop as notification ")
            let notification = try #require(shown.last?.split(separator: " ").last.flatMap { Int($0) })
            // Sent (gdbus emit returns once the bus has it) before dunst's own.
            try desktop.forgeActionInvoked(notification, key: "forged")
            try desktop.invokeAction(0)
            #expect(try waiting.waitForExit(timeout: 20) == 0)
            #expect(try waiting.remainingOutput() == "notification \(notification): action default\n")
        }
    }

    /// Without a session bus, or with one but no server, a push goes as
    /// before, and `status` says why nothing is shown.
    @Test func withoutABusOrAServerPushesGoAsBeforeAndStatusSaysSo() throws {
        let fixture = try HostFixture()
        try fixture.withHost { _ in
            let result = try fixture.group.run(["push", #"{"title":"Hi","body":"there"}"#])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout == #"delivered as sent (no notification extension attached): {"body":"there","title":"Hi"}"# + "\n")
            let status = try fixture.group.run(["status"])
            #expect(status.stdout.contains("desktop notifications: not shown: no session bus (no bus listens at /nonexistent/tether-tests)"),
                    "\(status.stdout)")
            let json = try fixture.status()
            #expect((json["desktopNotifications"] as? [String: Any])?["state"] as? String == "noSessionBus")
            let waited = try fixture.group.run(["push", "--wait", #"{"title":"Hi"}"#])
            #expect(waited.status == 1)
            #expect(waited.stderr.contains("not shown on the desktop: no session bus"), "\(waited.stderr)")
        }
        let desktop = try DesktopSession()
        try desktop.stopDunst()
        try fixture.withHost(environment: desktop.environment) { host in
            _ = try host.expectLineStarting("desktop notifications: not shown: no notification server on the session bus")
            let result = try fixture.group.run(["push", "--json", #"{"title":"Hi"}"#])
            #expect(result.status == 0, "\(result.stderr)")
            #expect((try fixture.group.json(result)["desktop"] as? [String: Any])?["shown"] as? Bool == false)
            #expect((try fixture.status()["desktopNotifications"] as? [String: Any])?["state"] as? String == "noServer")
            // A server that comes later is used from then on.
            try desktop.startDunst()
            _ = try host.expectLineStarting("desktop notifications: shown via dunst")
            #expect(try push(fixture, #"{"title":"Now shown"}"#).notification != nil)
        }
    }

    /// Invariant 22 while the server is slow: a push waiting for `Notify`'s
    /// answer (at most 2 s) still counts its bytes against its sender, and
    /// is then answered as delivered but not shown.
    @Test func aPushWaitingForTheServerStillCountsItsBytes() throws {
        let fixture = try HostFixture()
        let desktop = try DesktopSession()
        try withDesktopHost(fixture, desktop) { _ in
            desktop.pauseDunst()
            defer { desktop.pauseDunst(false) }
            let client = try fixture.rawClient()
            defer { client.close() }
            let data = String(repeating: "x", count: 900_000)
            for id in 1...5 {
                client.send(Array(#"{"jsonrpc":"2.0","id":\#(id),"method":"\#(HostMethod.push)","params":{"payload":{"title":"Big","data":"\#(data)"}}}"#.utf8) + [0x0a])
            }
            // The fifth is answered first: refused while the four wait for the server.
            let first = client.readLine() ?? ""
            #expect(first.contains(#""id":5"#) && first.contains("over its limit of 4194304"), "\(first.prefix(300))")
            for _ in 1...4 {
                let line = client.readLine() ?? ""
                #expect(line.contains("the notification server did not answer within 2 s"), "\(line.suffix(300))")
            }
        }
    }

    /// A bus that stops reading: each `Notify` the server did not answer
    /// in time still waits in GDBus's queue, in the host's memory, so it
    /// still counts against the ceiling of calls awaiting an answer; past
    /// it a push is answered at once, not queued behind the others.
    @Test func callsTheBusNeverAnsweredStillCountAgainstTheCeiling() throws {
        let fixture = try HostFixture()
        let desktop = try DesktopSession()
        try withDesktopHost(fixture, desktop) { _ in
            desktop.pauseBus()
            defer { desktop.pauseBus(false) }
            // One push each: a connection's pushes go one after another.
            let clients = try (0..<64).map { _ in try fixture.rawClient() }
            defer { for client in clients { client.close() } }
            // Short: once the bus runs again dunst draws all 64, and long
            // ones cost it seconds of CPU.
            let body = "stalled"
            for (index, client) in clients.enumerated() {
                client.send(Array(#"{"jsonrpc":"2.0","id":1,"method":"\#(HostMethod.push)","params":{"payload":{"title":"Stalled \#(index)","body":"\#(body)"}}}"#.utf8) + [0x0a])
            }
            for client in clients {
                let line = client.readLine() ?? ""
                #expect(line.contains("the notification server did not answer within 2 s"), "\(line.suffix(300))")
            }
            let late = try fixture.rawClient()
            defer { late.close() }
            late.send(Array(#"{"jsonrpc":"2.0","id":1,"method":"\#(HostMethod.push)","params":{"payload":{"title":"Late"}}}"#.utf8) + [0x0a])
            let answer = late.readLine() ?? ""
            #expect(answer.contains("64 notifications wait for the server's answer, the limit"), "\(answer.suffix(300))")
        }
    }

    /// Invariant 1 with a bus: the host's descriptor for it (sd-bus's
    /// socket) is close-on-exec, like all others, so no extension inherits
    /// a way onto the bus.
    @Test func theBusDescriptorsAreCloseOnExec() throws {
        let fixture = try HostFixture()
        let desktop = try DesktopSession()
        try withDesktopHost(fixture, desktop) { host in
            #expect(try push(fixture, #"{"title":"Hi"}"#).notification != nil)
            let directory = "/proc/\(host.pid)/fdinfo"
            let descriptors = try FileManager.default.contentsOfDirectory(atPath: directory).compactMap(Int.init).filter { $0 > 2 }
            let sockets = descriptors.filter {
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(host.pid)/fd/\($0)"))?.hasPrefix("socket:") == true
            }
            #expect(sockets.count >= 2, "the group's socket and the bus's: \(sockets)")
            for descriptor in descriptors {
                // Closed since the listing (a host's short-lived descriptor): nothing to check.
                guard let info = try? String(contentsOfFile: "\(directory)/\(descriptor)", encoding: .utf8) else { continue }
                let flags = info.split(separator: "\n").first { $0.hasPrefix("flags:") }.flatMap { Int($0.dropFirst(6)
                    .trimmingCharacters(in: .whitespaces), radix: 8) } ?? 0
                #expect(flags & 0o2_000_000 != 0, "descriptor \(descriptor) of the host is not close-on-exec: \(info)")
            }
        }
    }

    /// The session bus going away (a logout) is known at once, and pushes
    /// go on unshown; a bus back at the same address (a new login) is
    /// found at the next push, and the pushes after it are shown again.
    @Test func aBusThatGoesAndComesBackIsFollowed() throws {
        let fixture = try HostFixture()
        let desktop = try DesktopSession()
        try withDesktopHost(fixture, desktop) { host in
            try desktop.stopDunst()
            _ = try host.expectLineStarting("desktop notifications: not shown: no notification server on the session bus")
            try desktop.stopBus()
            _ = try host.expectLineStarting("desktop notifications: not shown: no session bus")
            #expect(try fixture.group.run(["status"]).stdout.contains("desktop notifications: not shown: no session bus"))
            let (unshown, answer) = try push(fixture, #"{"title":"While logged out"}"#)
            #expect(unshown == nil && ((answer["desktop"] as? [String: Any])?["reason"] as? String)?
                    .hasPrefix("no session bus") == true, "\(answer)")
            try desktop.startBus()
            // The first push after finds the bus again; the next is shown.
            #expect(try push(fixture, #"{"title":"Logging in"}"#).notification == nil)
            _ = try host.expectLineStarting("desktop notifications: shown via dunst")
            #expect(try push(fixture, #"{"title":"Back"}"#).notification != nil)
            #expect(try desktop.displayed() == 1)
        }
    }

    /// The host option, a notification extension's manifest and a payload
    /// each keep pushes off the desktop.
    @Test func theHostOptionTheManifestAndThePayloadTurnItOff() throws {
        let fixture = try HostFixture()
        let desktop = try DesktopSession()
        try fixture.withHost(arguments: ["--no-desktop-notifications"], environment: desktop.environment) { _ in
            let (shown, answer) = try push(fixture, #"{"title":"Hi"}"#)
            #expect(shown == nil && (answer["desktop"] as? [String: Any])?["reason"] as? String
                    == "off (tether host --no-desktop-notifications)", "\(answer)")
            #expect(try fixture.group.run(["status"]).stdout.contains("desktop notifications: off"))
        }
        try withDesktopHost(fixture, desktop) { _ in
            let (shown, answer) = try push(fixture, #"{"title":"Hi","showOnDesktop":false}"#)
            #expect(shown == nil && (answer["desktop"] as? [String: Any])?["reason"] as? String
                    == #"the payload says "showOnDesktop": false"#, "\(answer)")
        }
        let manifest = #"{"name":"notify","role":"notification","executable":"\#(exampleExecutable("example-notification"))","activation":"always","showOnDesktop":false}"#
        try writeFile("\(fixture.extensions)/notify.extension.json", manifest)
        try withDesktopHost(fixture, desktop, also: ["[notify] attached to host pid"]) { _ in
            let (shown, answer) = try push(fixture, #"{"title":"Hi"}"#)
            #expect(shown == nil && (answer["desktop"] as? [String: Any])?["reason"] as? String
                    == #"the manifest of 'notify' says "showOnDesktop": false"#, "\(answer)")
        }
        #expect(try desktop.displayed() == 0)
        #expect(try desktop.history().isEmpty)
    }

    /// Huge or binary display fields are refused up front with the field
    /// and its limit named: by the CLI (exit 2), and by the host on the
    /// socket. Nothing reaches the desktop.
    @Test func hugeOrBinaryFieldsAreRefusedWithAClearError() throws {
        let fixture = try HostFixture()
        let desktop = try DesktopSession()
        try withDesktopHost(fixture, desktop) { _ in
            let actions = (0..<9).map { #"{"key":"k\#($0)","label":"L"}"# }.joined(separator: ",")
            let cases: [(payload: String, error: String)] = [
                (#"{"title":"\#(String(repeating: "t", count: 513))"}"#, #""title" is 513 bytes; at most 512"#),
                (#"{"body":"\#(String(repeating: "é", count: 2_049))"}"#, #""body" is 4098 bytes; at most 4096"#),
                (#"{"title":"bell\u0007"}"#, #""title" holds the control character U+7"#),
                (#"{"body":"cut\u0000here"}"#, #""body" holds the control character U+0"#),
                (#"{"title":"x","actions":[\#(actions)]}"#, #""actions" has 9 actions; at most 8"#),
                (#"{"title":"x","urgency":"panic"}"#, #""urgency" must be low, normal or critical"#),
                (#"{"title":7}"#, #""title" must be a string"#),
            ]
            let client = try fixture.rawClient()
            defer { client.close() }
            for (index, item) in cases.enumerated() {
                let refused = try fixture.group.run(["push", item.payload])
                #expect(refused.status == 2, "\(item.payload.prefix(80)): \(refused.stderr)")
                #expect(refused.stderr.contains(item.error), "\(refused.stderr)")
                client.send(Array(#"{"jsonrpc":"2.0","id":\#(index),"method":"\#(HostMethod.push)","params":{"payload":\#(item.payload)}}"#.utf8) + [0x0a])
                let answer = client.readLine() ?? ""
                #expect(answer.contains(#""error""#) && answer.contains(item.error.replacingOccurrences(of: "\"", with: "\\\"")),
                        "\(answer.prefix(300))")
            }
            // Within the limits, newlines and tabs are text.
            #expect(try push(fixture, #"{"title":"\#(String(repeating: "t", count: 512))","body":"a\nb\tc"}"#).notification != nil)
            #expect(try desktop.displayed() == 1)
        }
    }
}
