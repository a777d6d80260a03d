import Foundation
import Testing
import TetherTestSupport

/// A read lock on a group lock file (fcntl F_RDLCK, as `lockf`/`flock -s`
/// style tools or a hostile process take one) is no holder: it changes no
/// answer of probe or hold, keeps no host, feature or refresh from its lock
/// (the file is replaced and the reader named), and a read-only role may
/// take no lock at all.
@Suite(.timed) struct ForeignReadLockTests {
    /// Holds a read lock on `path` (fcntl, as lockf(3) LOCK_SH) until killed.
    func readLock(_ path: String) throws -> TestProcess {
        let reader = try TestProcess("/usr/bin/env", ["python3", "-c", """
            import fcntl, os, sys, time
            fd = os.open(sys.argv[1], os.O_RDWR)
            fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            print("locked", flush=True)
            time.sleep(600)
            """, path])
        #expect(try reader.readLine(timeout: 20) == "locked")
        return reader
    }

    @Test func probeHoldAndTheHostIgnoreAReadLock() throws {
        let fixture = try HostFixture()
        let group = fixture.group
        #expect(try group.run(["hold", "host", "--", "true"]).status == 0)  // makes the lock file
        let reader = try readLock(group.path + "/locks/host.lock")
        #expect(try group.run(["probe", "host"]).status == 1, "a read lock is not a running host")
        try fixture.withHost { host in
            #expect(try group.run(["probe", "host"]).status == 0)
            #expect(try group.run(["hold", "host", "--", "true"]).status == 1)
            try host.waitForError(containing: "was read-locked by pid \(reader.pid), which keeps every holder out")

            // A feature's lock, read-locked before the host starts it.
            #expect(try group.run(["hold", "feature", "rec", "--", "true"]).status == 0)
            let featureReader = try readLock(group.featureLock("rec"))
            #expect(try group.run(["feature", "start", "rec"]).status == 0)
            #expect(try group.run(["probe", "feature", "rec"]).status == 0)
            withExtendedLifetime((reader, featureReader)) {}
        }
    }

    /// Eight holders at once on a read-locked file: exactly one holds. It
    /// holds until the test has heard from all eight (its command says
    /// "held", then reads its input to the end), so none comes too late to
    /// contend, however slowly they start.
    /// A FIFO or a symlink planted where a feature's lock goes: the start
    /// is refused with the reason (not an "Internal error"), the planted
    /// file is left alone, and the host goes on.
    @Test func aFIFOOrSymlinkPlantedAtAFeaturesLockIsRefusedWithItsReason() throws {
        let fixture = try HostFixture()
        let group = fixture.group
        try fixture.withHost { _ in
            try FileManager.default.createDirectory(atPath: group.path + "/locks/features", withIntermediateDirectories: true)
            #expect(mkfifo(group.featureLock("fifo"), 0o600) == 0)
            let decoy = group.path + "/decoy"
            try writeFile(decoy, "untouched", mode: 0o600)
            #expect(symlink(decoy, group.featureLock("link")) == 0)
            for name in ["fifo", "link"] {
                let result = try group.run(["feature", "start", name])
                #expect(result.status == 1)
                #expect(result.stderr.contains("cannot take feature '\(name)''s lock: "), "\(result.stderr)")
                #expect(!result.stderr.contains("Internal error"), "\(result.stderr)")
            }
            #expect(try String(contentsOfFile: decoy, encoding: .utf8) == "untouched")
            #expect(try group.run(["feature", "start", "fine"]).status == 0)
        }
    }

    @Test func contendersOnAReadLockedFileEndWithOneHolder() throws {
        for _ in 0..<4 {
            let group = try TestGroup()
            #expect(try group.run(["hold", "host", "--", "true"]).status == 0)
            let reader = try readLock(group.path + "/locks/host.lock")
            let holders = try (0..<8).map { _ in try group.start(["hold", "host", "--", "sh", "-c", "echo held; exec cat"]) }
            // The holder's first line, or the end of a refused one's output.
            let said = try holders.map { try $0.readLine(timeout: 30) }
            for holder in holders { holder.closeStdin() }
            let statuses = try holders.map { try $0.waitForExit(timeout: 30) }
            #expect(said.filter { $0 == "held" }.count == 1, "\(said)")
            let errors = try zip(holders, statuses).filter { $0.1 > 1 }.map { try $0.0.standardError() }
            #expect(statuses.filter { $0 == 0 }.count == 1 && statuses.filter { $0 == 1 }.count == 7, "\(statuses) \(errors)")
            withExtendedLifetime(reader) {}
        }
    }

    /// The refresh lock, read-locked: `token print` refreshes at once.
    @Test func aRefreshIsNotStalledByAReadLock() throws {
        let group = try TestGroup()
        let server = try HostileHTTPServer(in: group.dir)
        let login = try group.start(["login", "--token-url", server.baseURL + "/rotating-0",
                                     "--client-id", "app", "--username", "courier", "--password-stdin"])
        login.writeStdin("pw\n")
        login.closeStdin()
        #expect(try login.waitForExit(timeout: 30) == 0)
        #expect(try group.run(["token", "print"]).status == 0)  // a refresh: makes the refresh lock
        let reader = try readLock(group.path + "/locks/refresh.lock")
        let started = Date()
        let print = try group.run(["token", "print"])
        #expect(print.status == 0 && print.stdout == "access-3\n", "\(print.stderr)")
        #expect(Date().timeIntervalSince(started) < 10, "the refresh waited for a read lock")
        #expect(try server.counts()["stale"] == nil)
        withExtendedLifetime(reader) {}
    }

    /// A confined read-only keyboard cannot lock a group lock file, shared
    /// or not, flock or fcntl; it can still probe.
    @Test func aReadOnlyRoleTakesNoLock() throws {
        let fixture = try HostFixture()
        try writeFile(fixture.extensions + "/locker.py", """
            import errno, fcntl, os, subprocess, sys
            fd = os.open(os.environ["TETHER_GROUP"] + "/locks/host.lock", os.O_RDONLY)
            def attempt(name, take):
                try:
                    take()
                    print(name, "taken", flush=True)
                except OSError as error:
                    print(name, "refused", errno.errorcode.get(error.errno, error.errno), flush=True)
            attempt("flock", lambda: fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB))
            attempt("lockf", lambda: fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB))
            probe = subprocess.run([sys.argv[1], "probe", "host"], capture_output=True, text=True)
            print("probe", probe.returncode, (probe.stdout + probe.stderr).strip(), flush=True)
            print("done", flush=True)
            """)
        let manifest = #"{"name":"locker","role":"keyboard","executable":"/usr/bin/env","arguments":["python3","\#(fixture.extensions)/locker.py","\#(tetherExecutable)"],"activation":"always","restart":"never"}"#
        try writeFile(fixture.extensions + "/locker.extension.json", manifest)
        try fixture.withHost { host in
            let lines = try host.expectLine("[locker] done", timeout: 30)
            #expect(lines.contains("[locker] flock refused EPERM"), "\(lines)")
            #expect(lines.contains("[locker] lockf refused EPERM"), "\(lines)")
            #expect(lines.contains("[locker] probe 0 running"), "\(lines)")
        }
    }
}
