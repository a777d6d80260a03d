import TetherJSON

/// The push where a person sees it: under a desktop session with a
/// notification server, the host shows the rewritten push through it;
/// without one the day goes on as before and says why nothing was shown.
extension DemoDay {
    func desktopNotification(_ push: DemoProcess.Outcome) {
        guard push.succeeded, let answer = try? JSONCodec.parse(Array(push.text.utf8)),
              let desktop = answer["desktop"] else { return }
        guard desktop["shown"]?.boolValue == true else {
            say.detail("not shown on the desktop: \(desktop["reason"]?.stringValue ?? "no reason given")")
            return
        }
        // `tether status` names the server, as a user would ask.
        let statusText = (try? run(["status", "--json"]))?.text ?? ""
        let shownBy = (try? JSONCodec.parse(Array(statusText.utf8)))?["desktopNotifications"]
        let server = [shownBy?["server"]?.stringValue, shownBy?["version"]?.stringValue].compactMap { $0 }.joined(separator: " ")
        say.detail("shown on the desktop by \(server.isEmpty ? "the notification server" : server) "
                   + "as notification \(desktop["notification"]?.intValue ?? 0)")
        say.check("under a desktop session the rewritten push appears on the desktop", desktop["notification"]?.intValue != nil,
                  desktop.description)
    }
}
