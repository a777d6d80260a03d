import TetherJSON

/// A message as it crosses the wire: read from a request's params (refused
/// with the field at fault) and written as JSON. JSON stays at this edge:
/// the host, the SDK and the CLI handle the typed values.
package protocol WireMessage: Sendable {
    init(wire: JSONValue?) throws(RPCError)
    var wire: JSONValue { get }
}

/// Who may send a method's requests or a notification.
package enum MethodSender: Sendable, Equatable {
    /// The host, to its extensions of `role` (a manifest's role name).
    case host(toRole: String)
    /// An extension of `role` (nil: any), to the host.
    case extensionOf(role: String?)
    /// Any client of the host's socket.
    case client
}

/// Which of a host method's callers it answers (invariant 25: a keyboard
/// without open access passes nothing on).
package enum MethodAccess: Sendable, Equatable {
    /// Every caller: it reads, or is the role's own (its openURL hop, its tokens).
    case reading
    /// Every caller but a keyboard without open access: what it carries
    /// reaches another process.
    case relaying
    /// The user's clients only, never an extension: it reaches other
    /// extensions' processes, or tells of them.
    case user
}

/// One method, described once (name, parameters, answer, who calls it) and
/// shared by the host, the SDK, the CLI and the tests, as grpc-swift's
/// `MethodDescriptor` is: callers call with the types and get typed answers.
package struct MethodDescriptor<Parameters: WireMessage, Answer: WireMessage>: Sendable {
    package let name: String
    package let sender: MethodSender
    package let access: MethodAccess

    package init(_ name: String, sender: MethodSender, access: MethodAccess = .reading) {
        self.name = name
        self.sender = sender
        self.access = access
    }
}

/// One notification (a message nobody answers), described once.
package struct NotificationDescriptor<Parameters: WireMessage>: Sendable {
    package let name: String
    package let sender: MethodSender

    package init(_ name: String, sender: MethodSender) {
        self.name = name
        self.sender = sender
    }
}

/// No parameters, or an empty answer: `{}`.
package struct NoFields: WireMessage, Equatable {
    package init() {}
    package init(wire: JSONValue?) throws(RPCError) {}
    package var wire: JSONValue { .object([:]) }
}

extension RPCConnection {
    /// Calls `method`; `done` gets its answer read as `Answer`, or why not.
    @discardableResult
    package func call<Parameters, Answer>(_ method: MethodDescriptor<Parameters, Answer>, _ parameters: Parameters,
                                          _ done: @escaping (Result<Answer, RPCError>) -> Void) -> JSONValue {
        call(method.name, parameters.wire) { result in
            switch result {
            case .success(let json):
                do throws(RPCError) {
                    done(.success(try Answer(wire: json)))
                } catch {
                    done(.failure(error))
                }
            case .failure(let error):
                done(.failure(error))
            }
        }
    }

    /// Sends `notification`.
    package func notify<Parameters>(_ notification: NotificationDescriptor<Parameters>, _ parameters: Parameters) {
        notify(notification.name, parameters.wire)
    }
}
