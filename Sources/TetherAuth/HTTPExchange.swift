import AsyncHTTPClient
#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOHTTP1
import NIOPosix

/// One HTTP(S) request and its answer, over async-http-client.
///
/// Not Foundation's URLSession: on Linux that is libcurl and some 40 shared
/// libraries (GnuTLS, Kerberos, LDAP) loaded by every process that links
/// it, whether or not it ever makes a request. async-http-client is Swift
/// with BoringSSL inside, so a process pays for HTTP only when it uses it,
/// and a static build needs nothing from the machine. Redirects are not
/// followed: a credential is sent only to the URL it was configured for.
public enum HTTPExchange {
    public struct Response: Sendable {
        public let status: Int
        public let body: [UInt8]
    }

    /// Why no answer came. The text names no URL, header or body.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        case badURL
        case timedOut
        case refused
        case unresolved
        case tooLarge(limit: Int)
        /// The task that made the request was cancelled.
        case cancelled
        case failed(String)

        public var description: String {
            switch self {
            case .badURL: "not an http(s) URL"
            case .timedOut: "the request timed out"
            case .refused: "the connection was refused"
            case .unresolved: "the host name did not resolve"
            case .tooLarge(let limit): "the answer was larger than \(limit) bytes"
            case .cancelled: "the request was cancelled"
            case .failed(let reason): reason
            }
        }
    }

    /// The largest answer body read: token and JSON answers are small.
    public static let defaultMaximumBody = 4 << 20

    private static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        // A refused connection fails at once, as a token refresh expects:
        // its callers have their own retry policy (RetryBackoff), and the
        // pool's retries would hold a refresh until the deadline.
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
    }()

    /// True for an absolute http:// or https:// URL with a host.
    public static func isHTTPURL(_ url: String) -> Bool {
        let lower = url.lowercased()
        for scheme in ["https://", "http://"] where lower.hasPrefix(scheme) {
            let rest = lower.dropFirst(scheme.count)
            return !rest.isEmpty && rest.first != "/" && rest.first != "?" && rest.first != "#"
        }
        return false
    }

    public static func send(_ method: String, _ url: String, headers: [(String, String)] = [], body: [UInt8]? = nil,
                            timeout: Double, maximumBody: Int = defaultMaximumBody) async throws(Failure) -> Response {
        guard isHTTPURL(url) else { throw .badURL }
        var request = HTTPClientRequest(url: url)
        request.method = HTTPMethod(rawValue: method)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let milliseconds = timeout.isFinite ? Int64(max(0.001, min(timeout, 86_400)) * 1000) : 86_400_000
        let deadline = NIODeadline.now() + .milliseconds(milliseconds)
        do {
            let response = try await client.execute(request, deadline: deadline)
            var buffer = try await response.body.collect(upTo: maximumBody)
            return Response(status: Int(response.status.code), body: buffer.readBytes(length: buffer.readableBytes) ?? [])
        } catch let error as HTTPClientError {
            throw classify(error)
        } catch let error as NIOTooManyBytesError {
            _ = error
            throw .tooLarge(limit: maximumBody)
        } catch is CancellationError {
            throw .cancelled
        } catch {
            throw classify(other: error)
        }
    }

    private static func classify(_ error: HTTPClientError) -> Failure {
        switch error {
        case .deadlineExceeded, .readTimeout, .connectTimeout, .writeTimeout, .tlsHandshakeTimeout: .timedOut
        case .invalidURL, .emptyHost, .emptyScheme: .badURL
        case .remoteConnectionClosed: .failed("the connection was lost")
        case .cancelled: .cancelled
        // Not the error's description: some carry header values, a token among them.
        default: .failed("the request failed")
        }
    }

    private static func classify(other error: any Error) -> Failure {
        if let error = error as? NIOConnectionError {
            if error.dnsAAAAError != nil || error.dnsAError != nil, error.connectionErrors.isEmpty { return .unresolved }
            return error.connectionErrors.contains { ($0.error as? IOError)?.errnoCode == ECONNREFUSED } ? .refused : .failed("cannot connect")
        }
        if let error = error as? IOError, error.errnoCode == ECONNREFUSED { return .refused }
        if error is ChannelError { return .failed("the connection was lost") }
        return .failed("the request failed")
    }
}
