import Foundation
import Testing
import TetherSandbox
import TetherTestSupport

extension SandboxTests {
    /// Two groups in different parent directories, both logged in (their
    /// stores opened, which lists their secrets in the user's index): a
    /// read-only keyboard of the first reads neither group's secrets, while
    /// the other group itself stays readable. (Only its own group's were
    /// hidden before: the other's parent was granted whole.)
    /// Where it has no world of its own (Landlock hides them); in one,
    /// neither the secrets nor the other group are there at all.
    @Test(arguments: [true, false])
    func aReadOnlyKeyboardReadsNoGroupsSecretsWhereverTheGroupLives(ownWorld: Bool) throws {
        let world = ownWorld && ExtensionWorld.unavailable == nil
        let fixture = try HostFixture()
        let other = try TestGroup()
        let state = fixture.group.dir.path + "/state"
        let environment = fixture.group.environment.merging(["XDG_STATE_HOME": state]) { $1 }
        for group in [fixture.group, other] {
            try group.makeSecrets()
            try writeFile(group.credentialsPath, #"{"refresh":"SECRET"}"#, mode: 0o600)
            // What a login does first: opens the store (and so lists its secrets).
            let opened = try tether(group.withGroup(["token", "status"]), environment: environment)
            #expect(opened.status == 0, "\(opened.stderr)")
        }
        try writeFile("\(fixture.extensions)/reader.py", #"""
            import errno, json, os, sys
            def attempt(path, listing=False):
                try:
                    os.listdir(path) if listing else open(path).read()
                    return "ok"
                except OSError as error:
                    return errno.errorcode.get(error.errno, str(error.errno))
            own, other, other_group = sys.argv[1:4]
            print("RESULT " + json.dumps({
                "own": attempt(own + "/credentials.json"), "other": attempt(other + "/credentials.json"),
                "otherList": attempt(other, listing=True), "otherGroup": attempt(other_group, listing=True),
            }), flush=True)
            """#)
        let manifest: [String: Any] = [
            "name": "reader", "role": "keyboard", "executable": "/usr/bin/env",
            "arguments": ["python3", "\(fixture.extensions)/reader.py", fixture.group.secrets, other.secrets, other.path],
            "activation": "always", "restart": "never",
        ]
        try JSONSerialization.data(withJSONObject: manifest)
            .write(to: URL(fileURLWithPath: "\(fixture.extensions)/reader.extension.json"))
        let host = try startTether(fixture.group.withGroup(["host", "--extensions-dir", fixture.extensions]),
                                   without: world ? [] : [.namespaces], environment: environment)
        defer { host.signal(SIGTERM) }
        let line = try host.expectLineStarting("[reader] RESULT ", timeout: 30).last ?? ""
        let result = try #require(try JSONSerialization.jsonObject(with: Data(line.dropFirst("[reader] RESULT ".count).utf8))
            as? [String: String])
        let expected = world ? ["own": "ENOENT", "other": "ENOENT", "otherList": "ENOENT", "otherGroup": "ENOENT"]
            : ["own": "EACCES", "other": "EACCES", "otherList": "EACCES", "otherGroup": "ok"]
        #expect(result == expected, "\(result)")
    }
}
