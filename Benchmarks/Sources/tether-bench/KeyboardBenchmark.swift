import FoundationEssentials
import Glibc
import TetherJSON
import TetherLoop

/// keyboard.hop, where ibus-daemon and Python's IBus bindings are: a key
/// from an application's `ProcessKeyEvent` until its answer (the keyboard's
/// commit comes before it), through ibus-daemon, the host and the example
/// keyboard (`;rec` then a space: four deletions and a commit); against
/// the same call for a key the host answers itself (the space's release,
/// which no keyboard sees), in the same run, interleaved. The difference
/// is the hop to the keyboard and back. The application is a Python IBus
/// client on a daemon of the benchmark's own (its own HOME).
struct KeyboardBenchmark {
    let scratch: BenchScratch, scale: Double

    func run() throws -> [BenchResult] {
        guard let why = Self.unavailability() else { return [try hop()] }
        var line = "keyboard.hop skipped: \(why)\n"
        _ = line.withUTF8 { write(2, $0.baseAddress, $0.count) }
        return []
    }

    static func unavailability() -> String? {
        guard ExecutableSearch.onPath("ibus-daemon") != nil else { return "no ibus-daemon (sudo apt-get install ibus)" }
        guard let check = try? CommandOutput.run("/usr/bin/python3", ["-c", "import gi; gi.require_version('IBus', '1.0')"]),
              check.status == .exited(0) else {
            return "no IBus bindings for Python (sudo apt-get install python3-gi gir1.2-ibus-1.0)"
        }
        return nil
    }

    private func hop() throws -> BenchResult {
        let home = scratch.path + "/keyboard"
        let extensions = home + "/extensions"
        try FileManager.default.createDirectory(atPath: extensions, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: home + "/.config", withIntermediateDirectories: true)
        // The daemon's own HOME, no display: its address file is this run's.
        let environment = ["/usr/bin/env", "-u", "DISPLAY", "-u", "WAYLAND_DISPLAY", "-u", "IBUS_ADDRESS", "HOME=\(home)",
                           "XDG_CONFIG_HOME=\(home)/.config", "DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent/tether-bench"]
        let daemon = try BenchProcess(environment + ["ibus-daemon", "--panel=disable", "--emoji-extension=disable",
                                                     "--config=disable"], quietStderr: true)
        defer { Self.stop(daemon) }
        try writeSecretFile(extensions + "/bench-keyboard.extension.json",
                            #"{"name":"bench-keyboard","role":"keyboard","executable":"\#(scratch.tools.bin)/example-keyboard"}"#)
        let host = try BenchProcess(environment + [scratch.tools.tether, "host", "--group", home + "/group",
                                                   "--extensions-dir", extensions], quietStderr: true)
        defer { Self.stop(host) }
        // The engines are registered once the daemon's address file is
        // found (the host watches for it) and the keyboard attached.
        var registered = false, attached = false
        while !(registered && attached) {
            let line = try host.readLine(timeoutMilliseconds: 30_000)
            registered = registered || line.hasPrefix("input method: IBus engines tether:bench-keyboard")
            attached = attached || line.hasPrefix("[bench-keyboard] attached")
        }
        let client = home + "/client.py"
        try writeSecretFile(client, Self.client)
        let samples = max(50, Int(500 * scale))
        let application = try BenchProcess(environment + ["/usr/bin/python3", client, "tether:bench-keyboard", String(samples)])
        let answer = try application.readLine(timeoutMilliseconds: 120_000)
        _ = try application.wait()
        guard let json = try? JSONCodec.parse(Array(answer.utf8)),
              let hops = json["hop"]?.arrayValue?.compactMap(\.uint64Value),
              let answered = json["host"]?.arrayValue?.compactMap(\.uint64Value), hops.count == samples else {
            throw BenchError.environment("the IBus client measured nothing: \(answer)")
        }
        return BenchResult(name: "keyboard.hop", samples: hops,
                           baselines: ["answered by the host": Percentiles(nanoseconds: answered)])
    }

    private static func stop(_ process: BenchProcess) {
        kill(process.pid, SIGTERM)
        _ = try? process.wait()
    }

    /// The application: an input context on the engine, the text ";rec"
    /// around its cursor, then a space and its release, timed; each space
    /// must have brought its commit.
    static let client = """
        import json, sys, time
        import gi
        gi.require_version("IBus", "1.0")
        from gi.repository import IBus, GLib
        IBus.init()
        bus = IBus.Bus()
        context = bus.create_input_context("tether-bench")
        commits = []
        context.connect("commit-text", lambda c, text: commits.append(text.get_text()))
        context.set_capabilities(IBus.Capabilite.FOCUS | IBus.Capabilite.SURROUNDING_TEXT)
        context.focus_in()
        context.set_engine(sys.argv[1])
        loop = GLib.MainContext.default()
        def key(state):
            context.set_surrounding_text(IBus.Text.new_from_string(";rec"), 4, 4)
            start = time.monotonic_ns()
            context.process_key_event(0x20, 57, state)
            took = time.monotonic_ns() - start
            deadline = time.monotonic() + 5
            while loop.pending() and time.monotonic() < deadline:
                loop.iteration(False)
            return took
        hop, host = [], []
        for index in range(int(sys.argv[2]) + 20):
            through = key(0)
            answered = key(IBus.ModifierType.RELEASE_MASK)
            if index >= 20:
                hop.append(through)
                host.append(answered)
        if len(commits) < len(hop):
            print(json.dumps({"error": "%d commits for %d keys" % (len(commits), len(hop))}))
        else:
            print(json.dumps({"hop": hop, "host": host}))
        """
}
