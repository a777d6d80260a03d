/// A JSON-RPC 2.0 error object. Messages never carry secrets.
package struct RPCError: Error, Sendable, Equatable, Codable, CustomStringConvertible {
    package var code: Int
    package var message: String
    package var data: JSONValue?

    package init(code: Int, message: String, data: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    package static func parseError(_ detail: String) -> RPCError { RPCError(code: -32700, message: "Parse error: \(detail)") }
    package static func invalidRequest(_ detail: String) -> RPCError { RPCError(code: -32600, message: "Invalid request: \(detail)") }
    package static func methodNotFound(_ method: String) -> RPCError { RPCError(code: -32601, message: "Method not found: \(method)") }
    package static func invalidParams(_ detail: String) -> RPCError { RPCError(code: -32602, message: "Invalid params: \(detail)") }
    package static func internalError(_ detail: String) -> RPCError { RPCError(code: -32603, message: "Internal error: \(detail)") }
    /// Application errors (-32000 and below are reserved for servers).
    package static func refused(_ detail: String) -> RPCError { RPCError(code: -32001, message: detail) }

    package var description: String { message }
}
