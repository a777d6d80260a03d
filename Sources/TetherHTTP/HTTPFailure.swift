import CTetherCurl
#if canImport(Glibc)
import Glibc
#endif

/// Why no answer came. The text names no URL, header or body: they may
/// carry a secret.
package enum HTTPFailure: Error, Sendable, Equatable, CustomStringConvertible {
    case badURL
    case badRequest(String)
    /// The total deadline passed (`HTTPRequest.timeout`).
    case timedOut
    case refused
    case unresolved
    case tooLarge(limit: Int)
    /// The server's certificate was not accepted, or TLS failed.
    case insecure
    /// The task that made the request was cancelled, or the loop stopped.
    case cancelled
    /// libcurl is missing or too old: the sentence says what to install.
    case unavailable(String)
    case failed(String)

    package var description: String {
        switch self {
        case .badURL: "not an http(s) URL"
        case .badRequest(let reason): reason
        case .timedOut: "the request timed out"
        case .refused: "the connection was refused"
        case .unresolved: "the host name did not resolve"
        case .tooLarge(let limit): "the answer was larger than \(limit) bytes"
        case .insecure: "the server's certificate was not accepted (or the TLS handshake failed)"
        case .cancelled: "the request was cancelled"
        case .unavailable(let reason): reason
        case .failed(let reason): reason
        }
    }

    /// The failure for a transfer that ended with CURLcode `code`;
    /// `osErrno` is what connecting failed with.
    static func curl(_ code: Int32, osErrno: Int, limit: Int, overflowed: Bool) -> HTTPFailure {
        switch Int(code) {
        case _ where overflowed: .tooLarge(limit: limit)
        case TETHER_CURLE_FILESIZE_EXCEEDED: .tooLarge(limit: limit)
        case TETHER_CURLE_URL_MALFORMAT: .badURL
        case TETHER_CURLE_COULDNT_RESOLVE_HOST, TETHER_CURLE_COULDNT_RESOLVE_PROXY: .unresolved
        case TETHER_CURLE_COULDNT_CONNECT: osErrno == Int(ECONNREFUSED) ? .refused : .failed("cannot connect")
        case TETHER_CURLE_OPERATION_TIMEDOUT: .timedOut
        case TETHER_CURLE_SSL_CONNECT_ERROR, TETHER_CURLE_SSL_CERTPROBLEM,
             TETHER_CURLE_SSL_CIPHER, TETHER_CURLE_PEER_FAILED_VERIFICATION,
             TETHER_CURLE_SSL_CACERT_BADFILE, TETHER_CURLE_SSL_PINNEDPUBKEYNOTMATCH,
             TETHER_CURLE_SSL_INVALIDCERTSTATUS: .insecure
        case TETHER_CURLE_GOT_NOTHING, TETHER_CURLE_SEND_ERROR,
             TETHER_CURLE_RECV_ERROR, TETHER_CURLE_PARTIAL_FILE: .failed("the connection was lost")
        // The URL was checked before: an unsupported protocol is a server
        // that answered without HTTP (curl's HTTP/0.9 refusal).
        case TETHER_CURLE_UNSUPPORTED_PROTOCOL, TETHER_CURLE_WEIRD_SERVER_REPLY, TETHER_CURLE_HTTP2,
             TETHER_CURLE_HTTP2_STREAM, TETHER_CURLE_HTTP3,
             TETHER_CURLE_BAD_CONTENT_ENCODING: .failed("the server's answer was malformed")
        default: .failed("the request failed (curl error \(code))")
        }
    }
}
