import Foundation
import Testing
import TetherTestSupport

/// Where libcurl cannot be loaded, an HTTP request fails with one sentence
/// naming the package to install; commands without HTTP never load it. The
/// libraries are hidden for real: in a mount namespace of the test's own
/// (`unshare -rm`), each libcurl the loader knows is covered by /dev/null.
@Suite(.timed, .enabled(if: canHideLibraries, "needs unshare(1) and user namespaces"))
struct LibcurlMissingTests {
    /// `tether ARGS` with every libcurl the loader lists hidden.
    func withoutLibcurl(_ group: TestGroup, _ arguments: [String], stdin: String = "") throws -> CommandResult {
        let script = #"""
            for lib in $(/sbin/ldconfig -p | grep -oE '/[^ ]*libcurl(-gnutls)?\.so\.4$'); do
                mount --bind /dev/null "$(readlink -f "$lib")" || exit 97
            done
            input=$1
            shift
            printf '%s' "$input" | exec "$0" "$@"
            """#
        return try runCommand("/usr/bin/unshare", ["-rm", "/bin/sh", "-c", script, tetherExecutable, stdin]
                              + group.withGroup(arguments), timeout: 30)
    }

    @Test func aRequestSaysWhichPackageToInstallAndOtherCommandsRunOn() throws {
        let group = try TestGroup()
        let server = try HostileHTTPServer(in: group.dir)
        let login = try withoutLibcurl(group, ["login", "--style", "json", "--token-url", server.baseURL + "/token",
                                               "--username", "u", "--password-stdin"], stdin: "pw\n")
        #expect(login.status == 3, "\(login.stdout)\n\(login.stderr)")
        #expect(login.stderr.contains("HTTP needs libcurl, which cannot be loaded"), "\(login.stderr)")
        #expect(login.stderr.contains("sudo apt-get install libcurl4"), "\(login.stderr)")
        #expect(!login.stderr.contains("pw"))
        // Nothing without HTTP needs it.
        let probe = try withoutLibcurl(group, ["probe", "feature", "x"])
        #expect(probe.status == 1 && probe.stdout == "not running\n", "\(probe)")
    }
}

/// Whether this machine lets the tests make a user and mount namespace.
let canHideLibraries = (try? runCommand("/usr/bin/unshare", ["-rm", "true"]).status) == 0
