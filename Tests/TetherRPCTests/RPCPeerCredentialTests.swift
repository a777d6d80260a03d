import Foundation
import Testing
import TetherRPC
import TetherTestSupport

/// The server's peer check against a real process of another user: the
/// kernel's SO_PEERCRED, which no in-process peer can forge.
@Suite(.timed) struct RPCPeerCredentialTests {
    @Test(.enabled(if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
                   && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"),
                   "needs root, setpriv and python3 to connect as another user"))
    func peerOfAnotherUserIsDisconnectedUnanswered() throws {
        let server = try EchoServer()
        // Open the way for the test only: the socket is 0600 in a 0700 directory.
        chmod(server.dir.path, 0o755)
        chmod(server.path, 0o666)
        let script = """
            import socket
            s = socket.socket(socket.AF_UNIX)
            s.connect("\(server.path)")
            try:
                s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"uid"}\\n')
                answer = s.recv(4096).decode()
            except ConnectionError:  # reset or broken pipe: closed on us
                answer = ""
            print("answer:" + answer)
            """
        let result = try runCommand("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups",
                                                          "/usr/bin/python3", "-c", script])
        #expect(result.stdout == "answer:\n", "closed without an answer: \(result.stdout) \(result.stderr)")
        #expect(try server.refusedPeers == 1)
        #expect(RPCCall.perform(socketPath: server.path, method: "uid") == .success(0))
    }
}
