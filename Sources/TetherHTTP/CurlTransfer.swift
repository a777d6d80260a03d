import CTetherCurl
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One request on its way: its curl easy handle, the answer so far, and
/// the caller waiting for it. Made on the caller's thread; everything else
/// happens on the loop thread. Whoever ends it last resumes the caller
/// exactly once, even if the loop drops it unstarted (then from `deinit`).
final class CurlTransfer: @unchecked Sendable {
    typealias Outcome = Result<HTTPResponse, HTTPFailure>

    let request: HTTPRequest
    private let waiter: Mutex<CheckedContinuation<Outcome, Never>?>
    /// Set on the loop thread.
    private(set) var easy: UnsafeMutableRawPointer?
    private var headerList: UnsafeMutableRawPointer?
    /// The request body, owned here (not copied by curl) and cleared when
    /// the transfer ends: it may hold a password or a refresh token.
    private var requestBody: UnsafeMutableRawBufferPointer?
    private var body: [UInt8] = []
    private var overflowed = false
    /// Cancelled before the loop started it.
    var cancelledEarly = false

    init(_ request: HTTPRequest, _ continuation: CheckedContinuation<Outcome, Never>) {
        self.request = request
        waiter = Mutex(continuation)
    }

    deinit {
        // Dropped unstarted (the loop stopped before it ran): the caller must not wait forever.
        waiter.withLock { $0.take() }?.resume(returning: .failure(.cancelled))
        release()
    }

    /// Resumes the caller; later calls do nothing.
    func finish(_ outcome: Outcome) {
        release()
        waiter.withLock { $0.take() }?.resume(returning: outcome)
    }

    /// A configured easy handle for the request, or why there is none.
    func prepare() -> HTTPFailure? {
        if let refusal = request.refusal { return refusal }
        guard let easy = tether_curl_easy_init() else { return .failed("libcurl could not make a request handle") }
        self.easy = easy
        var failed = false
        func set(_ option: Int, _ value: Int) { failed = failed || tether_curl_easy_setopt_long(easy, Int32(option), value) != 0 }
        func set(_ option: Int, _ text: String) {
            failed = failed || text.withCString { tether_curl_easy_setopt_pointer(easy, Int32(option), $0) } != 0
        }
        set(TETHER_CURLOPT_URL, request.url)
        // Only http and https, also for anything a server names; no
        // redirects, no signals (SIGALRM) from a library inside a loop.
        if tether_curl_easy_setopt_pointer(easy, Int32(TETHER_CURLOPT_PROTOCOLS_STR), "http,https") != 0 {
            set(TETHER_CURLOPT_PROTOCOLS, TETHER_CURLPROTO_HTTP_HTTPS)  // before 7.85
            set(TETHER_CURLOPT_REDIR_PROTOCOLS, TETHER_CURLPROTO_HTTP_HTTPS)
        } else {
            set(TETHER_CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        }
        set(TETHER_CURLOPT_FOLLOWLOCATION, 0)
        set(TETHER_CURLOPT_NOSIGNAL, 1)
        // A transfer that ends while its name is being resolved must not
        // wait for the resolver's thread (on the loop): 7.87 and later.
        _ = tether_curl_easy_setopt_long(easy, Int32(TETHER_CURLOPT_QUICK_EXIT), 1)
        failed = failed || tether_curl_easy_set_cloexec_sockets(easy) != 0
        // What is allowed in clear because it never leaves the machine
        // must not go through a proxy either.
        set(TETHER_CURLOPT_NOPROXY, Self.noProxy)
        set(TETHER_CURLOPT_NOPROGRESS, 1)
        set(TETHER_CURLOPT_SSL_VERIFYPEER, 1)
        set(TETHER_CURLOPT_SSL_VERIFYHOST, 2)
        set(TETHER_CURLOPT_TIMEOUT_MS, request.timeoutMilliseconds)
        set(TETHER_CURLOPT_CONNECTTIMEOUT_MS, request.timeoutMilliseconds)
        failed = failed || tether_curl_easy_setopt_offset(easy, Int32(TETHER_CURLOPT_MAXFILESIZE_LARGE),
                                                          Int64(request.maximumBody)) != 0
        switch request.method {
        case "GET" where request.body == nil: set(TETHER_CURLOPT_HTTPGET, 1)
        case "HEAD": set(TETHER_CURLOPT_NOBODY, 1)
        case "POST": set(TETHER_CURLOPT_POST, 1)
        default: set(TETHER_CURLOPT_CUSTOMREQUEST, request.method)
        }
        if let body = request.body ?? (request.method == "POST" ? [] : nil) {
            failed = failed || tether_curl_easy_setopt_offset(easy, Int32(TETHER_CURLOPT_POSTFIELDSIZE_LARGE),
                                                              Int64(body.count)) != 0
            let owned = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, body.count), alignment: 1)
            owned.copyBytes(from: body)
            requestBody = owned
            failed = failed || tether_curl_easy_setopt_pointer(easy, Int32(TETHER_CURLOPT_POSTFIELDS), owned.baseAddress) != 0
        }
        // No "Expect: 100-continue" pause before a larger body; a name
        // servers that want one (GitHub's API) accept, unless given.
        let named = Set(request.headers.map { $0.0.lowercased() })
        let defaults = ["Expect:"] + (named.contains("user-agent") ? [] : ["User-Agent: tether"])
        for line in request.headers.map({ "\($0.0): \($0.1)" }) + defaults {
            guard let list = line.withCString({ tether_curl_slist_append(headerList, $0) }) else { failed = true; break }
            headerList = list
        }
        failed = failed || tether_curl_easy_setopt_pointer(easy, Int32(TETHER_CURLOPT_HTTPHEADER), headerList) != 0
        failed = failed || tether_curl_easy_set_writer(easy, { data, size, count, transfer in
            guard let transfer, let data else { return 0 }
            return Unmanaged<CurlTransfer>.fromOpaque(transfer).takeUnretainedValue().received(data, size &* count)
        }, Unmanaged.passUnretained(self).toOpaque()) != 0
        return failed ? .failed("libcurl refused the request's options") : nil
    }

    /// Part of the body; `0` (fewer than given) makes curl end the transfer.
    private func received(_ data: UnsafeMutablePointer<CChar>, _ count: Int) -> Int {
        guard body.count + count <= request.maximumBody else {
            overflowed = true
            return 0
        }
        body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: count))
        return count
    }

    /// The transfer ended with CURLcode `code`.
    func complete(_ code: Int32) {
        guard let easy else { return finish(.failure(.failed("the request ended before it started"))) }
        if code == TETHER_CURLE_OK {
            var status = 0
            _ = tether_curl_easy_getinfo_long(easy, Int32(TETHER_CURLINFO_RESPONSE_CODE), &status)
            finish(.success(HTTPResponse(status: status, body: body)))
        } else {
            var osErrno = 0
            _ = tether_curl_easy_getinfo_long(easy, Int32(TETHER_CURLINFO_OS_ERRNO), &osErrno)
            finish(.failure(.curl(code, osErrno: osErrno, limit: request.maximumBody, overflowed: overflowed)))
        }
    }

    /// Frees the easy handle, and clears and frees the header list and the
    /// request body (either may hold a secret).
    private func release() {
        if let easy { tether_curl_easy_cleanup(easy) }
        easy = nil
        if let headerList { tether_curl_slist_free_all_cleared(headerList) }
        headerList = nil
        if let requestBody {
            if let start = requestBody.baseAddress { explicit_bzero(start, requestBody.count) }
            requestBody.deallocate()
        }
        requestBody = nil
        body = []
    }

    /// curl's NOPROXY: loopback, and whatever the environment's `no_proxy`
    /// names (the option replaces it). `*` is a wildcard only alone, so it
    /// stays alone; 127.0.0.1 is named too, for curl before 7.86 (no CIDR).
    static let noProxy: String = {
        let given = ["no_proxy", "NO_PROXY"].compactMap { (name: String) -> String? in getenv(name).map { String(cString: $0) } }
            .first { !$0.isEmpty }
        if given?.filter({ $0 != " " && $0 != "\t" }) == "*" { return "*" }
        return ([given].compactMap { $0 } + ["localhost", "127.0.0.1", "127.0.0.0/8", "::1"]).joined(separator: ",")
    }()
}
