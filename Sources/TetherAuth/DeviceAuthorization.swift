import TetherJSON
import TetherLoop

/// The device authorization grant (RFC 8628), for machines without a
/// browser: the server hands out a user code, the user approves it on
/// another device, and this one polls the token endpoint until then.
package struct DeviceAuthorization: Sendable {
    package let deviceCode: String
    /// Shown to the user; printable ASCII only (a server's text reaches a terminal).
    package let userCode: String
    package let verificationURI: String
    package let verificationURIComplete: String?
    /// Seconds the codes live, and between polls (§3.2; default 5).
    package let expiresIn: Double
    package let interval: Double

    /// How the poll ended without tokens, in one sentence each.
    package enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        case expired
        case denied
        case endpoint(TokenEndpointError)

        package var description: String {
            switch self {
            case .expired: "the code expired before it was approved: run the login again for a new one"
            case .denied: "the sign-in was denied at the verification page"
            case .endpoint(let error): "\(error)"
            }
        }
    }

    init?(_ body: JSONValue?) {
        guard let deviceCode = body?["device_code"]?.stringValue, !deviceCode.isEmpty,
              let userCode = body?["user_code"]?.stringValue.map(OAuth2Requests.printable), !userCode.isEmpty,
              let uri = (body?["verification_uri"] ?? body?["verification_url"])?.stringValue,
              URLOrigin(uri) != nil, Self.isPrintable(uri)
        else { return nil }
        self.deviceCode = deviceCode
        self.userCode = userCode
        verificationURI = uri
        verificationURIComplete = body?["verification_uri_complete"]?.stringValue
            .flatMap { URLOrigin($0) != nil && Self.isPrintable($0) ? $0 : nil }
        expiresIn = max(1, min(body?["expires_in"]?.doubleValue ?? 600, 86_400))
        interval = max(1, min(body?["interval"]?.doubleValue ?? 5, 300))
    }

    private static func isPrintable(_ text: String) -> Bool {
        text.utf8.count <= 2048 && text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7f }
    }
}

extension TokenEndpoint {
    /// Asks the device authorization endpoint for a user code (§3.1).
    package nonisolated(nonsending) func authorizeDevice(at url: String) async throws(TokenEndpointError) -> DeviceAuthorization {
        guard configuration.style == .oauth2 else { throw .badConfiguration("device login is an OAuth 2.0 grant: use --style oauth2") }
        var form: [(String, String)] = []
        if let scope = configuration.scope, !scope.isEmpty { form.append(("scope", scope)) }
        let response = try await send(OAuth2Requests.clientRequest(url, form, configuration))
        let body = try? JSONCodec.parse(response.body)
        switch response.status {
        case 200..<300:
            guard let authorization = DeviceAuthorization(body) else { throw .serverUnavailable(status: response.status) }
            return authorization
        case 429, 500...: throw .serverUnavailable(status: response.status)
        default: throw OAuth2Requests.refusal(status: response.status, body: body)
        }
    }

    /// Polls the token endpoint until the user approves or denies, or the
    /// code expires (§3.4–3.5): at `interval`, 5 s more after each
    /// `slow_down`; an unreachable or failing server is polled again, more
    /// slowly, until the code expires.
    package nonisolated(nonsending) func pollDevice(_ authorization: DeviceAuthorization) async throws(DeviceAuthorization.Failure) -> TokenSet {
        let deadline = MonotonicClock.seconds() + authorization.expiresIn
        var interval = authorization.interval
        while true {
            let wait = min(interval, deadline - MonotonicClock.seconds())
            guard wait > 0 else { throw .expired }
            do {
                // The polling interval RFC 8628 asks for (a timer, not
                // synchronization): the server answers only when asked.
                try await Task.sleep(nanoseconds: UInt64(wait * 1e9))
            } catch {
                throw .endpoint(.unreachable("the login was cancelled"))
            }
            do throws(TokenEndpointError) {
                return try await request(.deviceCode(authorization.deviceCode))
            } catch .rejected(_, "authorization_pending") {
                continue
            } catch .rejected(_, "slow_down") {
                interval += 5
            } catch .rejected(_, "expired_token") {
                throw .expired
            } catch .rejected(_, "access_denied") {
                throw .denied
            } catch where error.isTransient {
                interval = max(interval, min(interval * 2, 60))  // never faster than asked
            } catch {
                throw .endpoint(error)
            }
        }
    }

}
