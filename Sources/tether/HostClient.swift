import TetherGroup
import TetherIPC

/// Calls the running host for a command: "host is not running" (exit 1)
/// when there is none, the host's own message (exit 1) when it refuses.
enum HostClient {
    static func call(_ group: GroupDirectory, _ method: String, _ params: JSONValue? = nil,
                     timeoutMilliseconds: UInt64 = 5_000) throws -> JSONValue {
        let hostLock = try group.preparedLockPath(for: .host)
        guard try LockProbe.status(ofLockAt: hostLock, identifyHolder: false).running else {
            throw CLIError.refused("host is not running")
        }
        switch RPCCall.perform(socketPath: group.socketPath, method: method, params: params,
                               timeoutMilliseconds: timeoutMilliseconds) {
        case .success(let value):
            return value
        case .failure(.remote(let error)):
            throw CLIError.refused(error.message)
        case .failure(.unreachable), .failure(.closed):
            throw CLIError.refused("host is not running (its socket \(group.socketPath) does not answer)")
        case .failure(.timedOut):
            throw CLIError.environment("the host did not answer within \(timeoutMilliseconds / 1000) seconds")
        }
    }
}
