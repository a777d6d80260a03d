import CTetherCurl

/// libcurl, loaded at the first request of the process (`dlopen`), so a
/// process that never does HTTP never maps it and a static build runs
/// where it is missing until it is needed.
enum CurlLibrary {
    /// nil once libcurl is loaded, else why it cannot be (one sentence
    /// naming the package to install).
    static func load() -> HTTPFailure? {
        var reason = [CChar](repeating: 0, count: 256)
        guard tether_curl_load(&reason, reason.count) != 0 else { return nil }
        return .unavailable(String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
}
