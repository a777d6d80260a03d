import Synchronization
@testable import TetherAuth
import TetherHTTP
import TetherJSON

/// A token endpoint in memory, for the broker's unit tests: each POST is
/// recorded, then answered by `answer` (given the request and how many
/// came before it). Nothing listens and nothing is spawned.
final class InMemoryTokenServer: TokenTransport {
    /// A request as the endpoint saw it: its URL and form fields.
    struct Request: Sendable {
        let url: String
        let form: [String: String]
    }

    typealias Answer = @Sendable (Request, Int) -> Result<HTTPResponse, HTTPFailure>

    private let answer: Answer
    private let received = Mutex<[Request]>([])

    init(_ answer: @escaping Answer) {
        self.answer = answer
    }

    /// Answers every request with `response`.
    convenience init(always response: HTTPResponse) {
        self.init { _, _ in .success(response) }
    }

    /// Answers the requests in turn with `responses`, the last one again after.
    convenience init(inTurn responses: [Result<HTTPResponse, HTTPFailure>]) {
        self.init { _, index in responses[min(index, responses.count - 1)] }
    }

    var requests: [Request] { received.withLock { $0 } }

    nonisolated(nonsending) func post(_ url: String, headers: [(String, String)], body: [UInt8],
                                      timeout: Double) async throws(HTTPFailure) -> HTTPResponse {
        var form: [String: String] = [:]
        // The tests' values need no decoding: letters, digits, '_' and '-'.
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2 { form[parts[0]] = parts[1] }
        }
        let request = Request(url: url, form: form)
        let index = received.withLock { requests in
            requests.append(request)
            return requests.count - 1
        }
        return try answer(request, index).get()
    }

    /// A 200 with a token pair that expires in `seconds`.
    static func tokens(_ access: String, refresh: String?, expiresIn seconds: Int = 3_600) -> HTTPResponse {
        var object: [String: JSONValue] = ["access_token": .string(access), "token_type": "Bearer",
                                           "expires_in": .number(JSONNumber(seconds))]
        if let refresh { object["refresh_token"] = .string(refresh) }
        return HTTPResponse(status: 200, body: JSONCodec.serialize(.object(object)))
    }

    /// An RFC 6749 §5.2 refusal.
    static func refusal(_ code: String, status: Int = 400) -> HTTPResponse {
        HTTPResponse(status: status, body: JSONCodec.serialize(.object(["error": .string(code)])))
    }

    static func unavailable(_ status: Int = 503) -> HTTPResponse {
        HTTPResponse(status: status, body: [])
    }
}
