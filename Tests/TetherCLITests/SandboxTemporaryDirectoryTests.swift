import Foundation
import Testing
import TetherIPC
import TetherTestSupport

extension SandboxTests {
    /// A keyboard without open access writes what the user types to its
    /// TMPDIR (a file, a FIFO): a widget, which has the network, must not
    /// read it, nor list where it is, nor a hand-started extension's. Each
    /// extension keeps its own TMPDIR; the rest reads as before.
    @Test(.waits) func noExtensionReadsAnothersTemporaryDirectory() throws {
        let fixture = try HostFixture()
        let base = fixture.group.dir.path + "/tmp"
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        let root = base + "/tether-\(geteuid())"
        let readable = fixture.group.dir.path + "/readable"
        try writeFile(readable, "x", mode: 0o600)
        // Made before the launch: entries on the way made later are not granted.
        let gate = fixture.group.dir.path + "/gate"
        #expect(mkfifo(gate, 0o600) == 0)
        try writeFile("\(fixture.extensions)/kb.py", Self.typingKeyboard)
        try writeFile("\(fixture.extensions)/w.py", Self.snoopingWidget)
        for (name, role) in [("kb", "keyboard"), ("w", "widget")] {
            let manifest: [String: Any] = [
                "name": name, "role": role, "executable": "/usr/bin/env",
                "arguments": ["python3", "\(fixture.extensions)/\(name).py", gate, readable],
                "openAccess": false, "activation": "on-demand", "restart": "never",
            ]
            try JSONSerialization.data(withJSONObject: manifest)
                .write(to: URL(fileURLWithPath: "\(fixture.extensions)/\(name).extension.json"))
        }
        // One started by hand, under the same BASE: it confines itself.
        let byHand = try TestProcess(exampleExecutable("SDKFixture"), ["rmdir-keyboard", "--group", fixture.group.path, "--name", "hand"],
                                     environment: ["TMPDIR": base])
        defer { byHand.signal(SIGTERM) }
        byHand.writeStdin("own\n")
        let own = try byHand.expectLineStarting("", containing: "own: ", timeout: 20).last ?? ""
        #expect(own.contains("own: ok \(root)/by-hand/hand."), "\(own)")
        let byHandDirectory = root + "/by-hand/" + (try #require(
            try FileManager.default.contentsOfDirectory(atPath: root + "/by-hand").first { $0.hasPrefix("hand.") }))
        try writeFile(byHandDirectory + "/note", "typed by hand", mode: 0o600)
        // Nor can it list its parent, where it may only remove its own.
        byHand.writeStdin("list \(root)/by-hand\n")
        let listed = try byHand.expectLineStarting("", containing: "list: ", timeout: 20).last ?? ""
        #expect(listed.contains("list: refused (Permission denied)"), "\(listed)")

        try fixture.withHost(environment: ["TMPDIR": base], without: [.namespaces]) { host in
            #expect(try fixture.group.run(["extension", "start", "kb"]).status == 0)
            let typed = try host.expectLineStarting("[kb] TYPED ", timeout: 30).last ?? ""
            let keyboard = try #require(typed.split(separator: " ").last.map(String.init))
            #expect(typed.hasPrefix("[kb] TYPED own=ok "), "\(typed)")
            #expect(keyboard.hasPrefix(root + "/"), "\(keyboard)")
            #expect(try fixture.group.run(["extension", "start", "w"]).status == 0)
            let paths = ["keyboard": keyboard, "byHand": byHandDirectory, "root": root]
            let opened = open(gate, O_RDWR)
            #expect(opened >= 0)
            defer { close(opened) }
            let line = String(decoding: try JSONSerialization.data(withJSONObject: paths), as: UTF8.self) + "\n"
            #expect(write(opened, line, line.utf8.count) == line.utf8.count)
            let said = try host.expectLineStarting("[w] RESULT ", timeout: 30).last ?? ""
            let result = try #require(try JSONSerialization.jsonObject(with: Data(said.dropFirst("[w] RESULT ".count).utf8))
                as? [String: String])
            let expected = [
                // Another's, wherever it is: not listed, not read, not even its FIFO opened.
                "listRoot": "EACCES", "listGroups": "EACCES", "listKeyboard": "EACCES", "readKeyboardFile": "EACCES",
                "openKeyboardFifo": "EACCES", "listByHand": "EACCES", "readByHandFile": "EACCES", "listByHandParent": "EACCES",
                // Its own, and what it read before.
                "own": "ok", "readable": "ok", "etc": "ok", "listUsr": "ok",
                // A directory on the way cannot be listed (Landlock grants a
                // directory with everything beneath it): docs/security.md.
                "listSlash": "EACCES",
            ]
            for (key, value) in expected { #expect(result[key] == value, "\(key): \(result)") }
        }
    }

    /// Writes what it was "typed" to a file and a FIFO in its TMPDIR, and
    /// says so with its TMPDIR once it has checked it can use it.
    static let typingKeyboard = """
        import os
        \(sayHello)
        tmp = os.environ["TMPDIR"]
        with open(os.path.join(tmp, "typed.txt"), "w") as f: f.write("hunter2")
        os.mkfifo(os.path.join(tmp, "pipe"), 0o600)
        # Read-write: its own open never blocks, and a reader would get what it writes.
        fifo = os.open(os.path.join(tmp, "pipe"), os.O_RDWR)
        os.write(fifo, b"card 4111\\n")
        own = "ok" if open(os.path.join(tmp, "typed.txt")).read() == "hunter2" and "pipe" in os.listdir(tmp) else "broken"
        print("TYPED own=%s %s" % (own, tmp), flush=True)
        # Alive (its TMPDIR kept) until the host closes its link.
        while os.read(link, 65536): pass
        """

    /// Tries to reach the keyboard's and the hand-started extension's
    /// TMPDIRs (told through the gate), its own, and what was readable.
    static let snoopingWidget = """
        import errno, json, os, sys
        \(sayHello)
        gate, readable = sys.argv[1], sys.argv[2]
        r = {}
        def attempt(name, f):
            try:
                f(); r[name] = "ok"
            except OSError as e:
                r[name] = errno.errorcode.get(e.errno, str(e.errno))
        with open(gate) as g: paths = json.loads(g.readline())
        kb, hand, root = paths["keyboard"], paths["byHand"], paths["root"]
        attempt("listRoot", lambda: os.listdir(root))
        attempt("listGroups", lambda: os.listdir(os.path.dirname(kb)))
        attempt("listKeyboard", lambda: os.listdir(kb))
        attempt("readKeyboardFile", lambda: open(os.path.join(kb, "typed.txt")).read())
        attempt("openKeyboardFifo", lambda: os.close(os.open(os.path.join(kb, "pipe"), os.O_RDONLY | os.O_NONBLOCK)))
        attempt("listByHand", lambda: os.listdir(hand))
        attempt("readByHandFile", lambda: open(os.path.join(hand, "note")).read())
        attempt("listByHandParent", lambda: os.listdir(os.path.dirname(hand)))
        def own():
            path = os.path.join(os.environ["TMPDIR"], "mine")
            with open(path, "w") as f: f.write("x")
            if open(path).read() != "x" or "mine" not in os.listdir(os.environ["TMPDIR"]): raise OSError(errno.EIO, "own")
        attempt("own", own)
        attempt("readable", lambda: open(readable).read())
        attempt("etc", lambda: open("/etc/passwd").read())
        attempt("listUsr", lambda: os.listdir("/usr"))
        attempt("listSlash", lambda: os.listdir("/"))
        print("RESULT " + json.dumps(r, sort_keys=True), flush=True)
        while os.read(link, 65536): pass
        """

    /// Says hello on its link, as the name and role the host gave it: the
    /// test's `extension start` is answered then, not after its 10 s wait.
    static let sayHello = """
        import json, os; link = int(os.environ["TETHER_HOST_FD"]); os.write(link, (json.dumps({"jsonrpc": "2.0", "id": 1, \
        "method": "\(HostMethod.hello)", "params": {"name": os.environ["TETHER_EXTENSION"], "role": os.environ["TETHER_ROLE"]}}) + "\\n").encode())
        """
}
