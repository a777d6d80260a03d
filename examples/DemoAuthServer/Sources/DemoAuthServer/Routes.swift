import FlyingFox
import Foundation

/// The HTTP surface of the demo server.
enum Routes {
    static let orders: [[String: String]] = [
        ["id": "1041", "item": "Espresso beans, 1 kg", "status": "delivered"],
        ["id": "1042", "item": "Pour-over kettle", "status": "shipped"],
        ["id": "1043", "item": "Paper filters, 100", "status": "packing"],
    ]

    static func install(on server: HTTPServer, _ authority: Authority) async {
        await server.appendRoute("POST /token") { request -> HTTPResponse in
            let form = await formBody(of: request)
            say("token request: \(form["grant_type"] ?? "none")")
            guard await clientIsAuthenticated(request, form: form, authority) else {
                return await invalidClient(authority, headers: [HTTPHeader("WWW-Authenticate"): "Basic realm=\"token\""])
            }
            let outcome = await authority.token(form: form)
            if let latency = await authority.takeLatency() {
                // Injected latency (a fault a test asks for, not synchronization),
                // after the grant took effect: a slow answer its client may
                // never see, the case a refresh lock must survive.
                try? await Task.sleep(nanoseconds: UInt64(latency) * 1_000_000)
            }
            switch outcome {
            case .tokens(let accessToken, let refreshToken, let expiresIn):
                var answer: [String: Any] = ["access_token": accessToken, "token_type": "Bearer", "expires_in": Int(expiresIn)]
                if let refreshToken { answer["refresh_token"] = refreshToken }
                return json(answer, status: .ok, headers: [.cacheControl: "no-store"])  // RFC 6749 §5.1
            case .error(let status, let code):
                return json(["error": code], status: statusCode(status))
            }
        }
        await server.appendRoute("POST /device_authorization") { request -> HTTPResponse in
            let form = await formBody(of: request)
            guard await clientIsAuthenticated(request, form: form, authority) else { return await invalidClient(authority) }
            let grant = await authority.authorizeDevice()
            say("device authorization: \(grant.userCode)")
            let page = baseURL(request) + "/device"
            return json(["device_code": grant.deviceCode, "user_code": grant.userCode, "verification_uri": page,
                         "verification_uri_complete": page + "?user_code=" + grant.userCode,
                         "expires_in": Int(grant.expiresIn), "interval": Int(grant.interval)], status: .ok)
        }
        // The verification page: where the user, on another device, enters
        // the code and approves (with their password) or denies.
        await server.appendRoute("GET /device") { request -> HTTPResponse in
            let code = request.query["user_code"].map { String($0.filter { $0.isLetter || $0 == "-" }) } ?? ""
            let page = """
                <!doctype html><title>Device login</title><form method="post" action="/device">
                <label>Code <input name="user_code" value="\(code)"></label>
                <label>User <input name="username"></label> <label>Password <input name="password" type="password"></label>
                <button name="action" value="approve">Approve</button> <button name="action" value="deny">Deny</button></form>
                """
            return HTTPResponse(statusCode: .ok, headers: [.contentType: "text/html; charset=utf-8"], body: Data(page.utf8))
        }
        await server.appendRoute("POST /device") { request -> HTTPResponse in
            let form = await formBody(of: request)
            let code = form["user_code"] ?? ""
            if form["action"] == "deny" {
                let known = await authority.decideDevice(userCode: code, approvedBy: nil)
                return json(["denied": known], status: known ? .ok : .notFound)
            }
            guard let user = form["username"], await authority.checkPassword(user: user, password: form["password"] ?? "") else {
                await authority.rejected()
                return json(["error": "wrong user name or password"], status: .unauthorized)
            }
            let known = await authority.decideDevice(userCode: code, approvedBy: user)
            return json(["approved": known], status: known ? .ok : .notFound)
        }
        await server.appendRoute("POST /revoke") { request -> HTTPResponse in
            let form = await formBody(of: request)
            guard await clientIsAuthenticated(request, form: form, authority) else { return await invalidClient(authority) }
            say("revocation request")
            await authority.revoke(form["token"] ?? "")
            return HTTPResponse(statusCode: .ok)
        }
        // Discovery: RFC 8414, and OpenID Connect's document for clients
        // (and servers) that know only that one.
        await server.appendRoute("GET /.well-known/oauth-authorization-server") { request -> HTTPResponse in
            guard await authority.settings.oauthMetadata != 0 else { return json(["error": "not found"], status: .notFound) }
            return json(metadata(baseURL(request)), status: .ok)
        }
        await server.appendRoute("GET /.well-known/openid-configuration") { request -> HTTPResponse in
            json(metadata(baseURL(request)), status: .ok)
        }
        await server.appendRoute("GET /orders") { request -> HTTPResponse in
            guard await bearer(request, authority) != nil else { return unauthorized() }
            let latency = await authority.ordersLatency
            if latency > 0 {
                // A slow backend (`ordersLatencyMs` in /admin/settings):
                // injected latency, not synchronization.
                try? await Task.sleep(nanoseconds: UInt64(latency * 1_000_000))
            }
            return json(["orders": orders], status: .ok)
        }
        await server.appendRoute("GET /orders/:id") { (request: HTTPRequest, id: String) -> HTTPResponse in
            guard await bearer(request, authority) != nil else { return unauthorized() }
            guard let order = orders.first(where: { $0["id"] == id }) else {
                return json(["error": "no such order"], status: .notFound)
            }
            return json(order, status: .ok)
        }
        await server.appendRoute("GET /counters") { _ -> HTTPResponse in
            json(await authority.counters, status: .ok)
        }
        await server.appendRoute("POST /admin/faults") { request -> HTTPResponse in
            guard let faults = await decodedBody(of: request, as: Authority.Faults.self) else { return badRequest() }
            return json(await authority.inject(faults), status: .ok)
        }
        await server.appendRoute("POST /admin/reject-access") { _ -> HTTPResponse in
            json(["rejected": await authority.rejectAccessTokens()], status: .ok)
        }
        await server.appendRoute("POST /admin/revoke") { _ -> HTTPResponse in
            json(["revoked": await authority.revokeAll()], status: .ok)
        }
        await server.appendRoute("POST /admin/settings") { request -> HTTPResponse in
            guard let patch = await decodedBody(of: request, as: [String: Double].self) else { return badRequest() }
            return json(await authority.update(settings: patch), status: .ok)
        }
    }

    /// This server as the client reached it (its Host header).
    static func baseURL(_ request: HTTPRequest) -> String {
        "http://" + (request.headers[.host] ?? "127.0.0.1")
    }

    static func metadata(_ issuer: String) -> [String: Any] {
        ["issuer": issuer, "token_endpoint": issuer + "/token", "device_authorization_endpoint": issuer + "/device_authorization",
         "revocation_endpoint": issuer + "/revoke",
         "grant_types_supported": ["password", "client_credentials", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"],
         "token_endpoint_auth_methods_supported": ["client_secret_basic", "none"]]
    }

    /// The request's form body; one over 64 KiB reads as empty.
    static func formBody(of request: HTTPRequest) async -> [String: String] {
        formDecode((await body(of: request)).map { String(decoding: $0, as: UTF8.self) } ?? "")
    }

    /// The request's JSON body as a `T`; nil when it is not one (or over 64 KiB).
    static func decodedBody<T: Decodable>(of request: HTTPRequest, as type: T.Type) async -> T? {
        guard let data = await body(of: request) else { return nil }
        return try? JSONDecoder().decode(type, from: data)
    }

    /// The request's body; nil past 64 KiB. Read to its end even then:
    /// FlyingFox would take what is left of it for the next request.
    static func body(of request: HTTPRequest) async -> Data? {
        var data = Data()
        var tooLarge = false
        do {
            for try await chunk in request.bodySequence where !tooLarge {
                data.append(chunk)
                if data.count > 1 << 16 { tooLarge = true; data = Data() }
            }
        } catch {
            return nil
        }
        return tooLarge ? nil : data
    }

    static func badRequest() -> HTTPResponse {
        json(["error": "the body is not what this endpoint takes"], status: .badRequest)
    }

    /// The status line for a status an Authority answers.
    static func statusCode(_ code: Int) -> HTTPStatusCode {
        switch code {
        case 400: .badRequest
        case 401: .unauthorized
        case 404: .notFound
        case 429: .tooManyRequests
        case 500: .internalServerError
        case 502: .badGateway
        case 503: .serviceUnavailable
        case 504: .gatewayTimeout
        default: HTTPStatusCode(code, phrase: "Status \(code)")
        }
    }

    /// RFC 6749 §5.2: the client did not authenticate (counted as a rejection).
    static func invalidClient(_ authority: Authority, headers: HTTPHeaders = [:]) async -> HTTPResponse {
        await authority.rejected()
        return json(["error": "invalid_client"], status: .unauthorized, headers: headers)
    }

    /// client_secret_basic when the server has a secret; else client_id in the form.
    static func clientIsAuthenticated(_ request: HTTPRequest, form: [String: String], _ authority: Authority) async -> Bool {
        guard let secret = authority.clientSecret else { return form["client_id"] == authority.clientID }
        guard let header = request.headers[.authorization], header.hasPrefix("Basic "),
              let decoded = Data(base64Encoded: String(header.dropFirst(6))),
              let text = String(data: decoded, encoding: .utf8), let colon = text.firstIndex(of: ":")
        else { return false }
        let id = percentDecode(String(text[..<colon]))
        let presented = percentDecode(String(text[text.index(after: colon)...]))
        return id == authority.clientID && presented == secret
    }

    static func bearer(_ request: HTTPRequest, _ authority: Authority) async -> String? {
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer ") else {
            await authority.rejected()
            return nil
        }
        return await authority.authorize(String(header.dropFirst(7)))
    }

    static func unauthorized() -> HTTPResponse {
        json(["error": "invalid_token"], status: .unauthorized, headers: [HTTPHeader("WWW-Authenticate"): "Bearer error=\"invalid_token\""])
    }

    static func json(_ value: some Encodable, status: HTTPStatusCode, headers: HTTPHeaders = [:]) -> HTTPResponse {
        var headers = headers
        headers[.contentType] = "application/json"
        return HTTPResponse(statusCode: status, headers: headers, body: (try? JSONEncoder().encode(value)) ?? Data("{}".utf8))
    }

    static func json(_ object: [String: Any], status: HTTPStatusCode, headers: HTTPHeaders = [:]) -> HTTPResponse {
        var headers = headers
        headers[.contentType] = "application/json"
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return HTTPResponse(statusCode: status, headers: headers, body: data)
    }

    static func formDecode(_ body: String) -> [String: String] {
        var form: [String: String] = [:]
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            form[percentDecode(String(parts[0]))] = parts.count > 1 ? percentDecode(String(parts[1])) : ""
        }
        return form
    }

    static func percentDecode(_ text: String) -> String {
        text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? text
    }
}
