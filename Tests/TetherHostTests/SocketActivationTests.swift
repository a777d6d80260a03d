import Glibc
import Testing
@testable import TetherHost

/// Socket activation's variables, as `sd_listen_fds` reads them: only
/// this process's, with a count in range, mean descriptors were passed.
/// (None is passed here: no descriptor of the test process is touched.)
@Suite struct SocketActivationTests {
    @Test func onlyThisProcesssVariablesWithACountInRangeMeanASocketWasPassed() {
        let me = String(getpid())
        for environment in [[:], ["LISTEN_FDS": "1"], ["LISTEN_PID": me], ["LISTEN_PID": "1", "LISTEN_FDS": "1"],
                            ["LISTEN_PID": me, "LISTEN_FDS": "0"], ["LISTEN_PID": me, "LISTEN_FDS": "-1"],
                            ["LISTEN_PID": me, "LISTEN_FDS": "1025"], ["LISTEN_PID": me, "LISTEN_FDS": "two"],
                            ["LISTEN_PID": "\(me)x", "LISTEN_FDS": "1"]] {
            guard case .success(nil) = SocketActivation.listeningSocket(at: "/nowhere/host.sock", environment: environment) else {
                Issue.record("\(environment) was taken as passed descriptors")
                continue
            }
        }
    }
}
