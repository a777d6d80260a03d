import Foundation
import Testing
import TetherManifest
import TetherTestSupport

/// A file past an extension's size limit (`RLIMIT_FSIZE`) ends it with
/// SIGXFSZ, and its exit says why (a shell's `head`: Python ignores the
/// signal, and gets EFBIG instead).
/// Where extensions get no world of their own (user namespaces refused):
/// in a world, TMPDIR is a tmpfs the kernel counts (ExtensionWorldTests).
@Suite(.timed)
struct DiskLimitTests {
    @Test func aFilePastTheLimitEndsTheExtensionWithReasonDisk() throws {
        let fixture = try HostFixture()
        let size = (ExtensionManifest.defaultDiskLimitMiB + 1) << 20
        try fixture.addExtension("filler", restart: "never", script: """
            exec head -c \(size) /dev/zero > "$TMPDIR/big"
            """)
        try fixture.withHost(without: [.namespaces]) { host in
            let last = try lastExit(of: "filler", in: fixture)
            #expect(last["reason"] as? String == "disk", "\(last)")
            #expect(last["signal"] as? Int == Int(SIGXFSZ), "\(last)")
            #expect(try host.stop() == 0)
        }
    }

    /// Many files, each under the limit, in a directory made after the
    /// launch: the total counts, and the extension is killed past it.
    @Test func aTemporaryDirectoryPastItsTotalEndsTheExtension() throws {
        let fixture = try HostFixture()
        try writeFile("\(fixture.extensions)/hoarder.sh", """
            #!/bin/sh
            mkdir -p "$TMPDIR/a/b" || exit 3
            i=0
            while [ $i -lt 64 ]; do head -c 1048576 /dev/zero > "$TMPDIR/a/b/f$i"; i=$((i + 1)); done
            echo "wrote 64 MiB"
            exec sleep 60
            """, mode: 0o755)
        let manifest = #"{"name":"hoarder","role":"widget","executable":"hoarder.sh","restart":"never","#
            + #""activation":"always","diskLimitMiB":8}"#
        try Data(manifest.utf8).write(to: URL(fileURLWithPath: "\(fixture.extensions)/hoarder.extension.json"))
        try fixture.withHost(without: [.namespaces]) { host in
            let last = try lastExit(of: "hoarder", in: fixture)
            #expect(last["reason"] as? String == "disk", "\(last)")
            #expect(last["signal"] as? Int == Int(SIGKILL), "\(last)")
            #expect(try host.stop() == 0)
            let errors = try host.standardError()
            #expect(errors.contains("more than 8 MiB or 1024 entries in its temporary directory"), "\(errors)")
        }
    }

    /// A directory named in bytes that are not UTF-8 cannot be watched by
    /// its path, so what is written in it would never be counted: the
    /// first count that finds one ends the extension (which writes a MiB
    /// every half second there, up to four times its limit).
    @Test func aDirectoryNotNamedInUTF8EndsTheExtension() throws {
        let fixture = try HostFixture()
        try writeFile("\(fixture.extensions)/hider.py", """
            import os, time
            hidden = os.path.join(os.fsencode(os.environ["TMPDIR"]), b"caf\\xe9")
            os.mkdir(hidden)
            for i in range(32):
                with open(os.path.join(hidden, b"f%d" % i), "wb") as f:
                    f.write(bytes(1 << 20))
                time.sleep(0.5)
            print("wrote 32 MiB unseen", flush=True)
            time.sleep(60)
            """)
        let manifest = #"{"name":"hider","role":"widget","executable":"/usr/bin/env","arguments":["python3","\#(fixture.extensions)/hider.py"],"#
            + #""restart":"never","activation":"always","diskLimitMiB":8}"#
        try writeFile("\(fixture.extensions)/hider.extension.json", manifest)
        try fixture.withHost(without: [.namespaces]) { host in
            let last = try lastExit(of: "hider", in: fixture)
            #expect(last["reason"] as? String == "disk", "\(last)")
            #expect(try host.stop() == 0)
            let errors = try host.standardError()
            #expect(errors.contains("or a directory there it cannot watch (not named in UTF-8, or unreadable)"), "\(errors)")
        }
    }

    /// What costs no bytes of content counts too: more entries than the
    /// limit allows (64 a MiB, at least 1,024; each count of the tree stops
    /// there, so a million empty files cost the host no more than that),
    /// and symlinks' targets.
    @Test func emptyFilesAndSymlinksCountToo() throws {
        let fixture = try HostFixture()
        // 1,100 entries of nothing; 300 entries of 4 KiB in symlinks.
        for (name, count, make) in [("many", 1_100, "open(os.path.join(t, 'f%d' % i), 'w').close()"),
                                    ("links", 300, "os.symlink('x' * 4000, os.path.join(t, 'l%d' % i))")] {
            try writeFile("\(fixture.extensions)/\(name).py", """
                import os, sys, time
                t = os.environ["TMPDIR"]
                for i in range(\(count)):
                    \(make)
                print("made", flush=True)
                time.sleep(60)
                """)
            let manifest = #"{"name":"\#(name)","role":"widget","executable":"/usr/bin/env","arguments":["python3","\#(fixture.extensions)/\#(name).py"],"#
                + #""restart":"never","activation":"always","diskLimitMiB":1}"#
            try writeFile("\(fixture.extensions)/\(name).extension.json", manifest)
        }
        try fixture.withHost(without: [.namespaces]) { host in
            for name in ["many", "links"] {
                let last = try lastExit(of: name, in: fixture)
                #expect(last["reason"] as? String == "disk", "\(name): \(last)")
            }
            #expect(try host.stop() == 0)
            let errors = try host.standardError()
            #expect(errors.contains("'many' holds more than 1 MiB or 1024 entries"), "\(errors)")
        }
    }

    /// The extension's `lastExit` in the host's status, once it has one.
    func lastExit(of name: String, in fixture: HostFixture) throws -> [String: Any] {
        var last: [String: Any] = [:]
        try waitFor("\(name)'s exit in the host's status", timeout: 30) {
            let list = (try? fixture.status()["extensions"] as? [[String: Any]]) ?? nil
            last = list?.first { $0["name"] as? String == name }?["lastExit"] as? [String: Any] ?? [:]
            return !last.isEmpty
        }
        return last
    }
}
