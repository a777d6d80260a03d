/// One JSON-RPC 2.0 message: a request (with id), a notification (no id),
/// or a response (result or error).
package enum RPCMessage: Sendable, Equatable {
    case request(id: JSONValue, method: String, params: JSONValue?)
    case notification(method: String, params: JSONValue?)
    case response(id: JSONValue, result: Result<JSONValue, RPCError>)

    /// Parses one frame that holds one message. Throws the RPCError to send
    /// back (with a null id).
    package static func parse(_ frame: [UInt8]) throws(RPCError) -> RPCMessage {
        try RPCMessage(try parseJSON(frame))
    }

    /// The frame as JSON: one message's object, or a batch's array (§6).
    static func parseJSON(_ frame: [UInt8]) throws(RPCError) -> JSONValue {
        do {
            return try JSONCodec.parse(frame)
        } catch {
            throw .parseError("the frame is not valid JSON (\(error))")
        }
    }

    /// One message from its JSON value (a whole frame or a batch's member).
    package init(_ value: JSONValue) throws(RPCError) {
        guard case .object(let object) = value else { throw .invalidRequest("expected a JSON object") }
        guard object["jsonrpc"] == .string("2.0") else { throw .invalidRequest("\"jsonrpc\" must be \"2.0\"") }
        let id = object["id"]
        if let method = object["method"] {
            guard case .string(let name) = method else { throw .invalidRequest("\"method\" must be a string") }
            let params = object["params"]
            if let params, !(params.isStructured) { throw .invalidRequest("\"params\" must be an object or array") }
            guard let id else {
                self = .notification(method: name, params: params)
                return
            }
            guard id.isValidID else { throw .invalidRequest("\"id\" must be a string, number or null") }
            self = .request(id: id, method: name, params: params)
            return
        }
        guard let id, id.isValidID else { throw .invalidRequest("a response needs an \"id\"") }
        if let error = object["error"] {
            guard let code = error["code"]?.intValue, let message = error["message"]?.stringValue else {
                throw .invalidRequest("malformed error object")
            }
            self = .response(id: id, result: .failure(RPCError(code: code, message: message, data: error["data"])))
            return
        }
        guard let result = object["result"] else { throw .invalidRequest("a response needs \"result\" or \"error\"") }
        self = .response(id: id, result: .success(result))
    }

    /// The frame for this message: compact JSON followed by a newline, keys
    /// in sorted order. Written field by field: no dictionary to build and
    /// sort for every message.
    package func encoded() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(96)
        write(to: &out)
        out.append(UInt8(ascii: "\n"))
        return out
    }

    /// A batch's answer (§6): the responses as one array frame.
    package static func encodedBatch(_ messages: [RPCMessage]) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "[")]
        out.reserveCapacity(96 * messages.count)
        for (position, message) in messages.enumerated() {
            if position > 0 { out.append(UInt8(ascii: ",")) }
            message.write(to: &out)
        }
        out += "]\n".utf8
        return out
    }

    private func write(to out: inout [UInt8]) {
        switch self {
        case .request(let id, let method, let params):
            out += #"{"id":"#.utf8
            JSONCodec.write(id, to: &out)
            out += #","jsonrpc":"2.0","method":"#.utf8
            JSONCodec.write(.string(method), to: &out)
            if let params {
                out += #","params":"#.utf8
                JSONCodec.write(params, to: &out)
            }
        case .notification(let method, let params):
            out += #"{"jsonrpc":"2.0","method":"#.utf8
            JSONCodec.write(.string(method), to: &out)
            if let params {
                out += #","params":"#.utf8
                JSONCodec.write(params, to: &out)
            }
        case .response(let id, .success(let value)):
            out += #"{"id":"#.utf8
            JSONCodec.write(id, to: &out)
            out += #","jsonrpc":"2.0","result":"#.utf8
            JSONCodec.write(value, to: &out)
        case .response(let id, .failure(let error)):
            var body: [String: JSONValue] = ["code": .integer(error.code), "message": .string(error.message)]
            if let data = error.data { body["data"] = data }
            out += #"{"error":"#.utf8
            JSONCodec.write(.object(body), to: &out)
            out += #","id":"#.utf8
            JSONCodec.write(id, to: &out)
            out += #","jsonrpc":"2.0""#.utf8
        }
        out.append(UInt8(ascii: "}"))
    }
}

extension JSONValue {
    var isStructured: Bool {
        switch self {
        case .object, .array: true
        default: false
        }
    }

    var isValidID: Bool {
        switch self {
        case .string, .number, .null: true
        default: false
        }
    }
}
