import Foundation
import Hummingbird

/// The HTTP surface of the demo server.
enum Routes {
    static let orders: [[String: String]] = [
        ["id": "1041", "item": "Espresso beans, 1 kg", "status": "delivered"],
        ["id": "1042", "item": "Pour-over kettle", "status": "shipped"],
        ["id": "1043", "item": "Paper filters, 100", "status": "packing"],
    ]

    static func router(_ authority: Authority) -> Router<BasicRequestContext> {
        let router = Router()
        router.post("/token") { request, _ -> Response in
            let form = await formBody(of: request)
            say("token request: \(form["grant_type"] ?? "none")")
            guard await clientIsAuthenticated(request, form: form, authority) else {
                var headers = HTTPFields()
                headers[.wwwAuthenticate] = "Basic realm=\"token\""
                return await invalidClient(authority, headers: headers)
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
                var headers = HTTPFields()
                headers[.cacheControl] = "no-store"  // RFC 6749 §5.1
                return json(answer, status: .ok, headers: headers)
            case .error(let status, let code):
                return json(["error": code], status: .init(code: status))
            }
        }
        router.post("/device_authorization") { request, _ -> Response in
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
        router.get("/device") { request, _ -> Response in
            let code = request.uri.queryParameters.get("user_code").map { String($0.filter { $0.isLetter || $0 == "-" }) } ?? ""
            let page = """
                <!doctype html><title>Device login</title><form method="post" action="/device">
                <label>Code <input name="user_code" value="\(code)"></label>
                <label>User <input name="username"></label> <label>Password <input name="password" type="password"></label>
                <button name="action" value="approve">Approve</button> <button name="action" value="deny">Deny</button></form>
                """
            var headers = HTTPFields()
            headers[.contentType] = "text/html; charset=utf-8"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: page)))
        }
        router.post("/device") { request, _ -> Response in
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
        router.post("/revoke") { request, _ -> Response in
            let form = await formBody(of: request)
            guard await clientIsAuthenticated(request, form: form, authority) else { return await invalidClient(authority) }
            say("revocation request")
            await authority.revoke(form["token"] ?? "")
            return Response(status: .ok)
        }
        // Discovery: RFC 8414, and OpenID Connect's document for clients
        // (and servers) that know only that one.
        router.get("/.well-known/oauth-authorization-server") { request, _ -> Response in
            guard await authority.settings.oauthMetadata != 0 else { return json(["error": "not found"], status: .notFound) }
            return json(metadata(baseURL(request)), status: .ok)
        }
        router.get("/.well-known/openid-configuration") { request, _ -> Response in
            json(metadata(baseURL(request)), status: .ok)
        }
        router.get("/orders") { request, _ -> Response in
            guard await bearer(request, authority) != nil else { return unauthorized() }
            let latency = await authority.ordersLatency
            if latency > 0 {
                // A slow backend (`ordersLatencyMs` in /admin/settings):
                // injected latency, not synchronization.
                try? await Task.sleep(nanoseconds: UInt64(latency * 1_000_000))
            }
            return json(["orders": orders], status: .ok)
        }
        router.get("/orders/:id") { request, context -> Response in
            guard await bearer(request, authority) != nil else { return unauthorized() }
            guard let order = orders.first(where: { $0["id"] == context.parameters.get("id") }) else {
                return json(["error": "no such order"], status: .notFound)
            }
            return json(order, status: .ok)
        }
        router.get("/counters") { _, _ -> Response in
            json(await authority.counters, status: .ok)
        }
        router.post("/admin/faults") { request, context -> Response in
            let faults = try await request.decode(as: Authority.Faults.self, context: context)
            return json(await authority.inject(faults), status: .ok)
        }
        router.post("/admin/reject-access") { _, _ -> Response in
            json(["rejected": await authority.rejectAccessTokens()], status: .ok)
        }
        router.post("/admin/revoke") { _, _ -> Response in
            json(["revoked": await authority.revokeAll()], status: .ok)
        }
        router.post("/admin/settings") { request, context -> Response in
            let patch = try await request.decode(as: [String: Double].self, context: context)
            return json(await authority.update(settings: patch), status: .ok)
        }
        return router
    }

    /// This server as the client reached it (its Host header).
    static func baseURL(_ request: Request) -> String {
        "http://" + (request.head.authority ?? "127.0.0.1")
    }

    static func metadata(_ issuer: String) -> [String: Any] {
        ["issuer": issuer, "token_endpoint": issuer + "/token", "device_authorization_endpoint": issuer + "/device_authorization",
         "revocation_endpoint": issuer + "/revoke",
         "grant_types_supported": ["password", "client_credentials", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"],
         "token_endpoint_auth_methods_supported": ["client_secret_basic", "none"]]
    }

    /// The request's form body; one over 64 KiB reads as empty.
    static func formBody(of request: Request) async -> [String: String] {
        var request = request
        return formDecode((try? await request.collectBody(upTo: 1 << 16)).map { String(buffer: $0) } ?? "")
    }

    /// RFC 6749 §5.2: the client did not authenticate (counted as a rejection).
    static func invalidClient(_ authority: Authority, headers: HTTPFields = HTTPFields()) async -> Response {
        await authority.rejected()
        return json(["error": "invalid_client"], status: .unauthorized, headers: headers)
    }

    /// client_secret_basic when the server has a secret; else client_id in the form.
    static func clientIsAuthenticated(_ request: Request, form: [String: String], _ authority: Authority) async -> Bool {
        guard let secret = authority.clientSecret else { return form["client_id"] == authority.clientID }
        guard let header = request.headers[.authorization], header.hasPrefix("Basic "),
              let decoded = Data(base64Encoded: String(header.dropFirst(6))),
              let text = String(data: decoded, encoding: .utf8), let colon = text.firstIndex(of: ":")
        else { return false }
        let id = percentDecode(String(text[..<colon]))
        let presented = percentDecode(String(text[text.index(after: colon)...]))
        return id == authority.clientID && presented == secret
    }

    static func bearer(_ request: Request, _ authority: Authority) async -> String? {
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer ") else {
            await authority.rejected()
            return nil
        }
        return await authority.authorize(String(header.dropFirst(7)))
    }

    static func unauthorized() -> Response {
        var headers = HTTPFields()
        headers[.wwwAuthenticate] = "Bearer error=\"invalid_token\""
        return json(["error": "invalid_token"], status: .unauthorized, headers: headers)
    }

    static func json(_ value: some Encodable, status: HTTPResponse.Status, headers: HTTPFields = [:]) -> Response {
        var headers = headers
        headers[.contentType] = "application/json"
        let data = (try? JSONEncoder().encode(value)) ?? Data("{}".utf8)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func json(_ object: [String: Any], status: HTTPResponse.Status, headers: HTTPFields = [:]) -> Response {
        var headers = headers
        headers[.contentType] = "application/json"
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
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
