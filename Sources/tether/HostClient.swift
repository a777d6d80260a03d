import TetherGroup
import TetherIPC

/// The running host, as the CLI calls it: one typed call per method of the
/// protocol (`HostMethod`). "host is not running" (exit 1) when there is
/// none, the host's own message (exit 1) when it refuses.
struct HostClient {
    let group: GroupDirectory

    func status() throws -> JSONValue { try call(HostMethod.status) }

    func startFeature(_ name: String) throws -> JSONValue { try call(HostMethod.featureStart, ["name": .string(name)]) }

    func stopFeature(_ name: String) throws -> JSONValue { try call(HostMethod.featureStop, ["name": .string(name)]) }

    func features() throws -> JSONValue { try call(HostMethod.featureList) }

    /// Waits for its hello (the host's own wait, and a margin).
    func startExtension(_ name: String) throws -> JSONValue {
        try call(HostMethod.extensionStart, ["name": .string(name)], timeoutMilliseconds: 15_000)
    }

    /// The host answers once it is gone: SIGTERM, then SIGKILL after its grace.
    func stopExtension(_ name: String) throws -> JSONValue {
        try call(HostMethod.extensionStop, ["name": .string(name)], timeoutMilliseconds: 60_000)
    }

    func extensions() throws -> JSONValue { try call(HostMethod.extensionList) }

    func push(_ request: PushRequest, waitingAtMost milliseconds: UInt64) throws -> JSONValue {
        try call(HostMethod.push, request.json, timeoutMilliseconds: milliseconds)
    }

    /// Every attached widget, or the one named.
    func reload(_ name: String?) throws -> JSONValue { try call(HostMethod.reload, name.map { ["name": .string($0)] }) }

    func metrics() throws -> JSONValue { try call(HostMethod.metrics) }

    private func call(_ method: String, _ params: JSONValue? = nil, timeoutMilliseconds: UInt64 = 5_000) throws -> JSONValue {
        let running = try LockProbe.status(of: .host, in: group, identifyHolder: false).status.running
        // With no host, a socket unit may listen there: connecting starts one.
        guard running || SocketFile.exists(at: group.socketPath) else { throw CLIError.refused("host is not running") }
        switch RPCCall.perform(socketPath: group.socketPath, method: method, params: params,
                               timeoutMilliseconds: timeoutMilliseconds) {
        case .success(let value):
            return value
        case .failure(.remote(let error)):
            throw CLIError.refused(error.message)
        case .failure(.unreachable) where !running:
            throw CLIError.refused("host is not running")
        case .failure(.unreachable), .failure(.closed):
            throw CLIError.refused("host is not running (its socket \(group.socketPath) does not answer)")
        case .failure(.timedOut):
            throw CLIError.environment("the host did not answer within \(timeoutMilliseconds / 1000) seconds")
        }
    }
}
