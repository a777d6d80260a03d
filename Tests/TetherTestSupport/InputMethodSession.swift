import Foundation
import TetherLoop

/// A desktop with an input method, of the test's own: a session bus, an X
/// display, and ibus-daemon with its own HOME and configuration (so its
/// address file is the test's), and GTK windows with one entry each that
/// know nothing of IBus: GTK loads its IBus module (`GTK_IM_MODULE=ibus`).
/// Keys are typed with `xdotool`; an entry's text is its window's title.
package final class InputMethodSession: @unchecked Sendable {
    package let directory: TemporaryDirectory
    private let bus: PrivateBus
    private let screen: PrivateDisplay
    private var daemon: TestProcess?
    private let home: String
    private let entryScript: String

    /// What a process needs to be in this session, and to find its ibus-daemon.
    package var environment: [String: String] {
        ["DBUS_SESSION_BUS_ADDRESS": bus.address, "DISPLAY": screen.display, "XAUTHORITY": screen.xauthority,
         "HOME": home, "XDG_CONFIG_HOME": home + "/.config", "GSETTINGS_BACKEND": "memory", "NO_AT_BRIDGE": "1"]
    }

    package init() throws {
        for tool in ["dbus-daemon", "Xvfb", "xauth", "ibus-daemon", "ibus", "xdotool"] where ExecutableSearch.onPath(tool) == nil {
            throw SpawnFailed(description: "\(tool) is missing: run .ci/ensure-system-libraries --tests")
        }
        directory = try TemporaryDirectory("tether-ibus")
        home = directory.path + "/home"
        try FileManager.default.createDirectory(atPath: home + "/.config", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        bus = try PrivateBus(in: directory.path)
        screen = try PrivateDisplay(in: directory.path)
        entryScript = directory.path + "/entry.py"
        try writeFile(entryScript, Self.entryApplication)
        try startDaemon()
    }

    /// Starts ibus-daemon; returns once its address file names it.
    package func startDaemon() throws {
        daemon = try TestProcess("ibus-daemon", ["--panel=disable", "--emoji-extension=disable", "--config=disable",
                                                 "--replace"], environment: environment)
        try waitFor("ibus-daemon's address", timeout: 30) {
            let result = try? command("ibus", ["address"])
            return result?.status == 0 && result?.stdout.hasPrefix("unix:") == true
        }
    }

    /// Ends ibus-daemon (its engines' connections close with it).
    package func stopDaemon() throws {
        guard let daemon else { return }
        daemon.signal(SIGTERM)
        _ = try daemon.waitForExit(timeout: 20)
        self.daemon = nil
    }

    /// Makes `engine` the input method (`ibus engine`), once it is registered.
    /// The tool's own status is not the answer: with a layout of "default"
    /// (as engines that keep the user's layout have) it exits 1 after
    /// selecting, having had no layout to give setxkbmap.
    package func select(_ engine: String) throws {
        var last = ""
        do {
            try waitFor("\(engine) to be selectable", timeout: 30) {
                let result = try command("ibus", ["engine", engine])
                last = "status \(result.status): \(result.stderr)"
                return try command("ibus", ["engine"]).stdout.trimmingCharacters(in: .newlines) == engine
            }
        } catch {
            throw TestTimeout(what: "\(engine) to be selectable (ibus engine: \(last))")
        }
    }

    /// A window with one entry (a password's when `password`), focused.
    package func entry(password: Bool = false) throws -> EntryWindow {
        let title = "entry\(UInt32.random(in: 0...UInt32.max))"
        let process = try TestProcess("/usr/bin/env", environment.merging(["GTK_IM_MODULE": "ibus"]) { $1 }
            .sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            + ["/usr/bin/python3", entryScript, title] + (password ? ["--password"] : []))
        let search = try command("xdotool", ["search", "--sync", "--name", "^\(title)[~=]"], timeout: 30)
        guard let window = search.stdout.split(separator: "\n").first.map(String.init) else {
            throw SpawnFailed(description: "the entry's window never appeared: \(search.stderr)")
        }
        let window0 = EntryWindow(session: self, process: process, window: window, title: title)
        try command("xdotool", ["windowfocus", "--sync", window])
        // Focused once the entry said so (GTK's focus-in reached IBus).
        try window0.waitForTitle { _ in true }
        return window0
    }

    /// Keys sent as an IBus client itself (Python's bindings), not a
    /// toolkit: an input context on `engine`, focused, its purpose set
    /// (IBus's numbers: 8 a password), then each of `text`'s characters
    /// pressed; whether each was handled, as "1" or "0".
    package func clientKeys(_ engine: String, purpose: Int, _ text: String) throws -> String {
        let script = directory.path + "/client.py"
        try writeFile(script, """
            import sys
            import gi
            gi.require_version("IBus", "1.0")
            from gi.repository import IBus
            IBus.init()
            context = IBus.Bus().create_input_context("tether-test")
            context.set_capabilities(IBus.Capabilite.FOCUS | IBus.Capabilite.SURROUNDING_TEXT)
            context.set_engine(sys.argv[1])
            context.focus_in()
            context.set_content_type(int(sys.argv[2]), 0)
            print("".join("1" if context.process_key_event(ord(c), 30, 0) else "0" for c in sys.argv[3]))
            context.focus_out()
            """)
        let result = try command("/usr/bin/python3", [script, engine, String(purpose), text])
        guard result.status == 0 else { throw SpawnFailed(description: "the IBus client failed: \(result.stderr)") }
        return result.stdout.trimmingCharacters(in: .newlines)
    }

    /// A command in this session.
    @discardableResult
    package func command(_ tool: String, _ arguments: [String], timeout: Double = 30) throws -> CommandResult {
        try runCommand("/usr/bin/env", environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" } + [tool] + arguments,
                       timeout: timeout)
    }

    /// Asks `condition` (a real command each time) until it holds, bounded by count and time.
    func waitFor(_ what: String, timeout: Double, _ condition: () throws -> Bool) throws {
        let deadline = TestTimeout.deadline(after: timeout)
        for _ in 0..<2_000 {
            if try condition() { return }
            if Date() > deadline { break }
        }
        throw TestTimeout(what: what)
    }

    deinit {
        daemon?.stopAlways()
        screen.stopAlways()
        bus.stopAlways()
    }

    /// The application: a GTK3 window whose title mirrors its entry
    /// ("TITLE=TEXT", "TITLE=" once focused), and that prints the text on
    /// SIGTERM. Nothing in it knows of IBus.
    static let entryApplication = """
        import signal, sys
        import gi
        gi.require_version("Gtk", "3.0")
        from gi.repository import Gtk, GLib
        name = sys.argv[1]
        win = Gtk.Window(title=name + "~")
        entry = Gtk.Entry()
        if "--password" in sys.argv:
            entry.set_visibility(False)
            entry.set_input_purpose(Gtk.InputPurpose.PASSWORD)
        win.add(entry)
        entry.connect("changed", lambda e: win.set_title(name + "=" + e.get_text()))
        entry.connect("focus-in-event", lambda e, _: win.set_title(name + "=" + e.get_text()) or False)
        win.connect("destroy", Gtk.main_quit)
        def bye():
            print(entry.get_text(), flush=True)
            Gtk.main_quit()
            return False
        GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, bye)
        win.show_all()
        entry.grab_focus()
        Gtk.main()
        """
}

/// One entry window of an `InputMethodSession`.
package final class EntryWindow: @unchecked Sendable {
    private let session: InputMethodSession
    private let process: TestProcess
    private let window: String
    private let title: String

    init(session: InputMethodSession, process: TestProcess, window: String, title: String) {
        self.session = session
        self.process = process
        self.window = window
        self.title = title
    }

    /// Types `text` as a person would, key by key, `delay` ms apart.
    package func type(_ text: String, delay: Int = 30) throws {
        let result = try session.command("xdotool", ["type", "--delay", String(delay), "--", text], timeout: 60)
        guard result.status == 0 else { throw SpawnFailed(description: "xdotool type failed: \(result.stderr)") }
    }

    /// The entry's text now.
    package func text() throws -> String? {
        let name = try session.command("xdotool", ["getwindowname", window]).stdout
            .trimmingCharacters(in: .newlines)
        guard name.hasPrefix(title + "=") else { return nil }
        return String(name.dropFirst(title.count + 1))
    }

    /// Waits until the entry's text satisfies `condition` (bounded); the text.
    @discardableResult
    package func waitForTitle(timeout: Double = 20, _ condition: (String) -> Bool) throws -> String {
        var last: String?
        do {
            try session.waitFor("the entry's text", timeout: timeout) {
                last = try text()
                return last.map(condition) ?? false
            }
        } catch {
            throw TestTimeout(what: "the entry's text (last: \(last.map { "'\($0)'" } ?? "none"))")
        }
        return last ?? ""
    }

    /// Waits until the entry holds exactly `expected`.
    package func waitForText(_ expected: String, timeout: Double = 20) throws {
        try waitForTitle(timeout: timeout) { $0 == expected }
    }

    /// Closes the window; what the entry held.
    package func close() throws -> String {
        process.signal(SIGTERM)
        return try process.remainingOutput().trimmingCharacters(in: .newlines)
    }

    deinit { process.stopAlways() }
}
