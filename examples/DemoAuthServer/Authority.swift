import Foundation
import JWTKit

/// The server's state: issued token families, settings, faults, counters.
/// An actor, so concurrent requests see one consistent history.
actor Authority {
    struct Settings: Codable, Sendable {
        var accessTTL: Double
        var reuseGrace: Double
        /// Milliseconds each /orders answer waits (a slow backend).
        var ordersLatencyMs: Double = 0
    }

    /// Pending faults for /token: the next `count` requests answer `status`,
    /// the next `latencyCount` requests wait `latencyMs` first.
    struct Faults: Codable, Sendable {
        var status: Int?
        var count: Int?
        var latencyMs: Int?
        var latencyCount: Int?
    }

    struct Counters: Codable, Sendable {
        var tokenRequests = 0
        var passwordGrants = 0
        var clientCredentialsGrants = 0
        /// Successful refresh_token grants.
        var refreshes = 0
        /// A rotated refresh token presented within the grace period.
        var graceReuses = 0
        /// A rotated refresh token presented after it: the family is revoked.
        var reuseDetected = 0
        var familiesRevoked = 0
        /// Requests refused with 4xx by /token or /orders.
        var rejections = 0
        var faultsInjected = 0
        var ordersServed = 0
    }

    /// Every refresh token of one login. Only `current` may be used; a
    /// rotated one within `reuseGrace` seconds of its rotation is tolerated
    /// (the answer to a request its client never saw), any other use
    /// revokes the family.
    struct Family {
        let subject: String
        var current: String
        var rotated: [String: Double] = [:]
        var revoked = false
    }

    struct Claims: JWTPayload {
        var sub: SubjectClaim
        var exp: ExpirationClaim
        var iat: IssuedAtClaim
        var jti: IDClaim
        var fam: String?

        func verify(using algorithm: some JWTAlgorithm) throws {
            try exp.verifyNotExpired()
        }
    }

    enum Outcome: Sendable {
        case tokens(accessToken: String, refreshToken: String?, expiresIn: Double)
        case error(status: Int, code: String)
    }

    var settings: Settings
    var faults = Faults()
    private(set) var counters = Counters()
    let clientID: String
    let clientSecret: String?
    let users: [String: String]
    private var families: [String: Family] = [:]
    /// Which family each refresh token, current or rotated, belongs to.
    private var familyOfToken: [String: String] = [:]
    /// Access tokens (by `jti`) issued so far, and those refused before their
    /// expiry (`/admin/reject-access`: revoked early, as a server may).
    private var issuedAccess: Set<String> = []
    private var rejectedAccess: Set<String> = []
    private let keys = JWTKeyCollection()

    init(settings: Settings, clientID: String, clientSecret: String?, users: [String: String]) async {
        self.settings = settings
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.users = users
        var generator = SystemRandomNumberGenerator()
        await keys.add(hmac: HMACKey(from: (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }),
                       digestAlgorithm: .sha256)
    }

    func update(settings patch: [String: Double]) -> Settings {
        if let ttl = patch["accessTTL"] { settings.accessTTL = ttl }
        if let grace = patch["reuseGrace"] { settings.reuseGrace = grace }
        if let latency = patch["ordersLatencyMs"] { settings.ordersLatencyMs = max(0, min(latency, 60_000)) }
        return settings
    }

    func inject(_ new: Faults) -> Faults {
        faults = new
        return faults
    }

    /// The latency to add to this token request, if a fault asks for one.
    func takeLatency() -> Int? {
        guard let remaining = faults.latencyCount, remaining > 0, let latency = faults.latencyMs else { return nil }
        faults.latencyCount = remaining - 1
        counters.faultsInjected += 1
        return latency
    }

    func rejected() { counters.rejections += 1 }

    var ordersLatency: Double { settings.ordersLatencyMs }

    /// Refuses every access token issued so far, leaving the refresh tokens
    /// valid; returns how many.
    func rejectAccessTokens() -> Int {
        rejectedAccess.formUnion(issuedAccess)
        issuedAccess.removeAll()
        return rejectedAccess.count
    }

    /// Revokes every family; returns how many were live.
    func revokeAll() -> Int {
        var count = 0
        for (id, family) in families where !family.revoked {
            families[id]?.revoked = true
            count += 1
        }
        counters.familiesRevoked += count
        return count
    }

    /// Answers one /token request (its client already authenticated).
    func token(form: [String: String]) async -> Outcome {
        counters.tokenRequests += 1
        if let remaining = faults.count, remaining > 0, let status = faults.status {
            faults.count = remaining - 1
            counters.faultsInjected += 1
            return .error(status: status, code: "temporarily_unavailable")
        }
        switch form["grant_type"] {
        case "password":
            guard let user = form["username"], let password = form["password"], users[user] == password else {
                counters.rejections += 1
                return .error(status: 400, code: "invalid_grant")
            }
            counters.passwordGrants += 1
            let familyID = UUID().uuidString
            let refreshToken = Self.randomToken()
            families[familyID] = Family(subject: user, current: refreshToken)
            familyOfToken[refreshToken] = familyID
            return await issue(subject: user, family: familyID, refreshToken: refreshToken)
        case "client_credentials":
            counters.clientCredentialsGrants += 1
            return await issue(subject: "client:\(clientID)", family: nil, refreshToken: nil)
        case "refresh_token":
            guard let presented = form["refresh_token"], let familyID = familyOfToken[presented],
                  var family = families[familyID], !family.revoked
            else {
                counters.rejections += 1
                return .error(status: 400, code: "invalid_grant")
            }
            let now = Date().timeIntervalSince1970
            if presented != family.current {
                let rotatedAt = family.rotated[presented] ?? 0
                guard now - rotatedAt <= settings.reuseGrace else {
                    family.revoked = true
                    families[familyID] = family
                    counters.reuseDetected += 1
                    counters.familiesRevoked += 1
                    counters.rejections += 1
                    return .error(status: 400, code: "invalid_grant")
                }
                counters.graceReuses += 1
            }
            let next = Self.randomToken()
            family.rotated[family.current] = now
            family.current = next
            families[familyID] = family
            familyOfToken[next] = familyID
            counters.refreshes += 1
            return await issue(subject: family.subject, family: familyID, refreshToken: next)
        default:
            counters.rejections += 1
            return .error(status: 400, code: "unsupported_grant_type")
        }
    }

    /// The token's subject if it is a valid, unrevoked user access token
    /// (orders belong to users: a client token is refused).
    func authorize(_ token: String) async -> String? {
        guard let claims = try? await keys.verify(token, as: Claims.self), let family = claims.fam else {
            counters.rejections += 1
            return nil
        }
        if families[family]?.revoked ?? true || rejectedAccess.contains(claims.jti.value) {
            counters.rejections += 1
            return nil
        }
        counters.ordersServed += 1
        return claims.sub.value
    }

    private func issue(subject: String, family: String?, refreshToken: String?) async -> Outcome {
        let now = Date()
        let jti = UUID().uuidString
        issuedAccess.insert(jti)
        let claims = Claims(sub: .init(value: subject), exp: .init(value: now.addingTimeInterval(settings.accessTTL)),
                            iat: .init(value: now), jti: .init(value: jti), fam: family)
        guard let accessToken = try? await keys.sign(claims) else {
            return .error(status: 500, code: "server_error")
        }
        return .tokens(accessToken: accessToken, refreshToken: refreshToken, expiresIn: settings.accessTTL)
    }

    private static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in String(generator.next(), radix: 36) }.joined(separator: ".")
    }
}
