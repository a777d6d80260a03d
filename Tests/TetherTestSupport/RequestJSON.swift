import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A JSON request to a test server; its JSON answer.
package func requestJSON(_ method: String, _ url: String, _ body: [String: Any]?, form: Bool = false) throws -> Any {
    guard let target = URL(string: url) else { throw TestTimeout(what: "a valid URL for \(url)") }
    var request = URLRequest(url: target, timeoutInterval: 10)
    request.httpMethod = method
    if let body, form {
        let allowed = CharacterSet.alphanumerics
        request.httpBody = Data(body.map { key, value in
            key + "=" + ("\(value)".addingPercentEncoding(withAllowedCharacters: allowed) ?? "")
        }.joined(separator: "&").utf8)
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
    } else if let body {
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    }
    let done = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var result: Data?
    URLSession.shared.dataTask(with: request) { data, _, _ in
        result = data
        done.signal()
    }.resume()
    guard done.wait(timeout: .now() + 15) == .success, let data = result else {
        throw TestTimeout(what: "\(method) \(url)")
    }
    return try JSONSerialization.jsonObject(with: data)
}
