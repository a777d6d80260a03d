import SystemPackage
import TetherLoop

/// Why a one-shot call did not return a result.
package enum RPCCallError: Error, Sendable, Equatable {
    /// Nothing listens at the socket (or it cannot be reached).
    case unreachable(Errno)
    case timedOut
    /// The peer closed the connection before answering.
    case closed
    /// The peer answered with an error.
    case remote(RPCError)
    /// What came back broke the protocol (not JSON-RPC, or past the largest
    /// answer taken): something other than a host may be at the socket.
    case malformed(String)
}

/// A blocking request/response on a fresh connection, for command-line tools:
/// runs its own event loop on the calling thread until the answer arrives or
/// `timeoutMilliseconds` passes. `goodbye`: as `RPCConnection.goodbye`.
package enum RPCCall {
    /// The largest answer taken: a host's status and metrics for thousands
    /// of extensions (1.5 MB for a thousand) pass; the host still holds
    /// what its peers send it to `LineFramer.defaultMaximumFrameSize`.
    package static let maximumAnswerSize = 32 << 20

    package static func perform(
        socketPath: String, method: String, params: JSONValue? = nil, timeoutMilliseconds: UInt64 = 5_000,
        goodbye: String? = nil
    ) -> Result<JSONValue, RPCCallError> {
        let outcome: Result<JSONValue, RPCCallError>?
        do {
            outcome = try EventLoop.runUntilDone { (loop, done: LoopCompletion<Result<JSONValue, RPCCallError>>) in
                LoopTimer(loop: loop).start(afterMilliseconds: timeoutMilliseconds) { done.finish(.failure(.timedOut)) }
                PipeStream.connect(loop: loop, path: socketPath) { connected in
                    switch connected {
                    case .failure(let error):
                        done.finish(.failure(.unreachable(error)))
                    case .success(let stream):
                        // A host sends nothing that is not JSON-RPC: the
                        // first such frame ends the call (it waited out its
                        // whole timeout before).
                        let connection = RPCConnection(stream: stream, maximumFrameSize: maximumAnswerSize,
                                                       goodbye: goodbye, badFramesAllowed: 0)
                        connection.start(handler: { _, _, _, respond in
                            respond(.failure(.methodNotFound("client")))
                        }, onClose: { _ in done.finish(.failure(.closed)) })
                        connection.call(method, params) { result in
                            switch result {
                            case .success(let value): done.finish(.success(value))
                            case .failure(let error) where connection.closedForMisbehaving:
                                done.finish(.failure(.malformed(error.message)))
                            case .failure(let error): done.finish(.failure(.remote(error)))
                            }
                            connection.close()
                        }
                    }
                }
            }
        } catch {
            return .failure(.unreachable(error))
        }
        return outcome ?? .failure(.closed)
    }
}
