import TetherGroup
import TetherIPC

/// The running host, as the CLI calls it: one typed call per method of the
/// protocol (`HostMethods`). "host is not running" (exit 1) when there is
/// none, the host's own message (exit 1) when it refuses.
struct HostClient {
    let group: GroupDirectory

    /// How long a call waits for the host's answer, unless said otherwise.
    static let defaultTimeout = Seconds(5)

    func status(limit: Int? = nil, timeout: Seconds = HostClient.defaultTimeout) throws -> JSONValue {
        try call(HostMethods.status, StatusRequest(limit: limit), timeoutMilliseconds: timeout.milliseconds).wire
    }

    func startFeature(_ name: String) throws -> FeatureStarted { try call(HostMethods.featureStart, NamedTarget(name: name)) }

    func stopFeature(_ name: String) throws -> FeatureStopped { try call(HostMethods.featureStop, NamedTarget(name: name)) }

    func features() throws -> FeatureListing { try call(HostMethods.featureList, NoFields()) }

    /// Waits for its hello: the host's own wait, and a margin for a busy
    /// host (5 s was too little for one in an emulated VM beside others).
    func startExtension(_ name: String) throws -> ExtensionStatus {
        try call(HostMethods.extensionStart, NamedTarget(name: name),
                 timeoutMilliseconds: HostMethods.extensionStartWaitMilliseconds + 20_000)
    }

    /// The host answers once it is gone: SIGTERM, then SIGKILL after its grace.
    func stopExtension(_ name: String) throws -> ExtensionStopped {
        try call(HostMethods.extensionStop, NamedTarget(name: name), timeoutMilliseconds: 60_000)
    }

    func extensions() throws -> ExtensionListing { try call(HostMethods.extensionList, NoFields()) }

    func push(_ request: PushRequest, waitingAtMost milliseconds: UInt64) throws -> PushAnswer {
        try call(HostMethods.push, request, timeoutMilliseconds: milliseconds)
    }

    /// Every attached widget, or the one named.
    func reload(_ name: String?) throws -> ReloadAnswer { try call(HostMethods.reload, ReloadRequest(name: name)) }

    func metrics() throws -> MetricsAnswer { try call(HostMethods.metrics, NoFields()) }

    private func call<Parameters, Answer>(_ method: MethodDescriptor<Parameters, Answer>, _ parameters: Parameters,
                                          timeoutMilliseconds: UInt64 = HostClient.defaultTimeout.milliseconds) throws -> Answer {
        let running = try LockProbe.status(of: .host, in: group, identifyHolder: false).status.running
        // With no host, a socket unit may listen there: connecting starts one.
        guard running || SocketFile.exists(at: group.socketPath) else { throw CLIError.refused("host is not running") }
        switch RPCCall.perform(socketPath: group.socketPath, method: method.name, params: parameters.wire,
                               timeoutMilliseconds: timeoutMilliseconds, goodbye: HostNotification.disconnecting) {
        case .success(let value):
            do throws(RPCError) {
                return try Answer(wire: value)
            } catch {
                throw CLIError.environment("the host's answer to \(method.name) cannot be read: \(error.message)")
            }
        case .failure(.malformed(let why)):
            throw CLIError.environment("the answer on \(group.socketPath) cannot be taken: \(why)")
        case .failure(.remote(let error)):
            throw CLIError.refused(error.message)
        case .failure(.unreachable) where !running:
            throw CLIError.refused("host is not running")
        case .failure(.unreachable), .failure(.closed):
            throw CLIError.refused("host is not running (its socket \(group.socketPath) does not answer)")
        case .failure(.timedOut):
            throw CLIError.environment("the host did not answer within \(Seconds(milliseconds: timeoutMilliseconds).text)")
        }
    }
}
