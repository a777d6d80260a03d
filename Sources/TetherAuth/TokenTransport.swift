import TetherHTTP

/// What carries a token request: one POST, its status and body. The token
/// endpoint asks nothing else of HTTP, so this is where a transport is
/// swapped: `HTTPClient` (libcurl on the loop) in every process, an
/// in-memory server in the broker's unit tests.
protocol TokenTransport: Sendable {
    nonisolated(nonsending) func post(_ url: String, headers: [(String, String)], body: [UInt8],
                                      timeout: Double) async throws(HTTPFailure) -> HTTPResponse
}

extension HTTPClient: TokenTransport {
    nonisolated(nonsending) func post(_ url: String, headers: [(String, String)], body: [UInt8],
                                      timeout: Double) async throws(HTTPFailure) -> HTTPResponse {
        try await send("POST", url, headers: headers, body: body, timeout: timeout)
    }
}
