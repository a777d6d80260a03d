import TetherIPC
import TetherJSON

/// The host's requests by method (grpc-swift's router): each handler is
/// registered with its method's description, which reads the parameters
/// (refusing them with the field at fault), writes the answer, and says
/// who may call it. Dispatch is one lookup; a method no one registered is
/// `methodNotFound`. `Connection`: who asks (the host's `RPCConnection`;
/// anything in a test of routing alone).
struct HostRouter<Connection> {
    /// What a route asks of its caller, and what it does.
    struct Route {
        let access: MethodAccess
        let handle: (Connection, JSONValue?, @escaping RPCConnection.Respond) -> Void
    }

    private(set) var routes: [String: Route] = [:]

    /// `body` answers `method` with its types; `decode` reads the
    /// parameters where the host's rules go beyond the message's own.
    mutating func on<Parameters, Answer>(
        _ method: MethodDescriptor<Parameters, Answer>,
        decode: @escaping (JSONValue?) throws(RPCError) -> Parameters = { (wire: JSONValue?) throws(RPCError) in try Parameters(wire: wire) },
        _ body: @escaping (Connection, Parameters, @escaping (Result<Answer, RPCError>) -> Void) -> Void
    ) {
        routes[method.name] = Route(access: method.access) { connection, params, respond in
            let parameters: Parameters
            do throws(RPCError) { parameters = try decode(params) } catch { return respond(.failure(error)) }
            body(connection, parameters) { respond($0.map(\.wire)) }
        }
    }

    /// The methods a caller with `access` at most may call.
    func methods(allowing access: MethodAccess) -> Set<String> {
        Set(routes.filter { $0.value.access == access }.keys)
    }
}
