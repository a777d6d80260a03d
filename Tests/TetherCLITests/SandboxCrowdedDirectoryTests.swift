import Foundation
import Testing
import TetherTestSupport

extension SandboxTests {
    /// Secrets are hidden by granting read on each entry beside them, one
    /// descriptor each: a parent of thousands (a crowded `/tmp`) under a
    /// small descriptor limit must neither run the process out of
    /// descriptors nor leave its group unreadable, nor fall back to
    /// granting everything (secrets included). (In the VM tier, whose
    /// `/tmp` held a thousand entries and whose limit is 1,024, it did.)
    @Test func aCrowdedParentUnderASmallDescriptorLimitStillGrantsTheGroup() throws {
        let group = try TestGroup()
        for index in 0..<2_000 {
            let fd = open(group.dir.path + "/entry-\(index)", O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
            #expect(fd >= 0)
            close(fd)
        }
        let temporary = group.dir.path + "/tmp"
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        let keyboard = try TestProcess("/bin/sh", ["-c", #"ulimit -n 256 && exec "$@""#, "sh",
                                                   exampleExecutable("example-keyboard"), "--group", group.path],
                                       environment: ["TMPDIR": temporary])
        let lines = try Self.sandboxCheck(keyboard)
        #expect(lines.contains { $0.contains("writing the group: refused by the kernel (Permission denied)") }, "\(lines)")
        keyboard.closeStdin()
        let exit = try keyboard.waitForExit(timeout: 10)
        let errors = (try? keyboard.standardError(timeout: 5)) ?? ""
        #expect(exit == 0, "\(errors)")
        // Not by granting everything instead: the secrets stayed hidden.
        #expect(!errors.contains("secrets"), "\(errors)")
    }

    /// The example keyboard's `sandbox` command: it tries to write the group
    /// and to connect out, and says what the kernel answered (two lines).
    static func sandboxCheck(_ keyboard: TestProcess) throws -> [String] {
        keyboard.writeStdin("sandbox\n")
        var lines: [String] = []
        for _ in 0..<20 where lines.filter({ $0.contains("sandbox: ") }).count < 2 {
            guard let line = try keyboard.readLine(timeout: 15) else { break }
            lines.append(line)
        }
        return lines
    }
}
