/// The widget where a person sees it: `tether widget watch`, as a status bar
/// (waybar) runs it, started once and left running through the host's
/// death and return.
extension DemoDay {
    func startStatusBar() throws {
        let bar = try stage.start("status-bar", tether, ["widget", "watch", "example-widget", "--format", "waybar", "--group", group])
        statusBar = bar
        say.detail("$ tether widget watch example-widget --format waybar   (what a waybar module runs)")
        let line = try bar.line("the status bar's line", timeout: 10) { $0.contains("orders: 1041") }
        say.detail("status bar: \(line)")
        say.check("a status bar's line shows the widget's entry", line.hasPrefix("{") && line.contains("\"text\""), line)
    }

    func statusBarSaysOffline() throws {
        guard let bar = statusBar else { return }
        let line = try bar.line("the status bar to say offline") { $0.contains("\"offline\"") }
        say.detail("status bar: \(line)")
        say.check("the status bar's line says the host is offline", line.contains("\"class\":\"offline\""), line)
    }

    func statusBarIsBack() throws {
        guard let bar = statusBar else { return }
        // After the offline line: the new host's.
        let line = try bar.line("the status bar's line to come back", timeout: 30) {
            $0.contains("orders: 1041") && !$0.contains("offline")
        }
        say.detail("status bar: \(line)")
        say.check("the same status bar shows the widget again, not restarted", !line.contains("offline"), line)
    }
}
