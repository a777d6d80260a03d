import Foundation

/// The server's state: issued token families, settings, faults, counters.
/// An actor, so concurrent requests see one consistent history.
actor Authority {
    struct Settings: Codable, Sendable {
        var accessTTL: Double
        var reuseGrace: Double
        /// Milliseconds each /orders answer waits (a slow backend).
        var ordersLatencyMs: Double = 0
        /// Device grant (RFC 8628): seconds between polls, and a code's life.
        var deviceInterval: Double = 5
        var deviceExpiresIn: Double = 600
        /// 0: no RFC 8414 document, only OpenID Connect's (as some servers have).
        var oauthMetadata: Double = 1
    }

    /// Pending faults for /token: the next `count` requests answer `status`,
    /// the next `latencyCount` requests wait `latencyMs` first.
    struct Faults: Codable, Sendable {
        var status: Int?
        var count: Int?
        var latencyMs: Int?
        var latencyCount: Int?
        /// The next `slowDownCount` device polls answer `slow_down`.
        var slowDownCount: Int?
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
        var deviceAuthorizations = 0
        var devicePolls = 0
        var pendingAnswers = 0
        var slowDowns = 0
        /// Polls sooner than the interval (RFC 8628 §3.5 asks the client to wait it, +5 s after slow_down).
        var pollsTooFast = 0
        var deviceGrants = 0
        /// Revocation requests naming a live refresh token (RFC 7009).
        var revocations = 0
    }

    /// One device authorization (RFC 8628 §3.2) and what the user did with it.
    struct DeviceGrant {
        enum State { case pending, approved(String), denied, used }
        let userCode: String
        let expiresAt: Double
        var interval: Double
        var lastPoll: Double?
        var state = State.pending
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
    private var accessTokens = AccessTokens()
    /// By device code.
    private var deviceGrants: [String: DeviceGrant] = [:]

    init(settings: Settings, clientID: String, clientSecret: String?, users: [String: String]) async {
        self.settings = settings
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.users = users
    }

    func update(settings patch: [String: Double]) -> Settings {
        if let ttl = patch["accessTTL"] { settings.accessTTL = ttl }
        if let grace = patch["reuseGrace"] { settings.reuseGrace = grace }
        if let latency = patch["ordersLatencyMs"] { settings.ordersLatencyMs = max(0, min(latency, 60_000)) }
        if let interval = patch["deviceInterval"] { settings.deviceInterval = max(0, min(interval, 60)) }
        if let life = patch["deviceExpiresIn"] { settings.deviceExpiresIn = max(0, min(life, 3600)) }
        if let flag = patch["oauthMetadata"] { settings.oauthMetadata = flag }
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
        return max(0, min(latency, 60_000))  // as ordersLatencyMs: a negative one would trap
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
        case "urn:ietf:params:oauth:grant-type:device_code":
            return await deviceToken(form["device_code"] ?? "")
        case "password":
            guard let user = form["username"], let password = form["password"], users[user] == password else {
                counters.rejections += 1
                return .error(status: 400, code: "invalid_grant")
            }
            counters.passwordGrants += 1
            return await issueNewFamily(subject: user)
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

    /// Starts a device authorization (the client is authenticated):
    /// (device code, user code, seconds to live, interval).
    func authorizeDevice() -> (deviceCode: String, userCode: String, expiresIn: Double, interval: Double) {
        counters.deviceAuthorizations += 1
        let deviceCode = Self.randomToken()
        // RFC 8628 §6.1: few characters, no vowels or look-alikes, easy to type.
        let alphabet = Array("BCDFGHJKLMNPQRSTVWXZ")
        var generator = SystemRandomNumberGenerator()
        let letters = String((0..<8).map { _ in alphabet[Int(generator.next(upperBound: UInt(alphabet.count)))] })
        let userCode = String(letters.prefix(4)) + "-" + String(letters.suffix(4))
        deviceGrants[deviceCode] = DeviceGrant(userCode: userCode, expiresAt: Date().timeIntervalSince1970 + settings.deviceExpiresIn,
                                               interval: settings.deviceInterval)
        return (deviceCode, userCode, settings.deviceExpiresIn, settings.deviceInterval)
    }

    /// The user at the verification page: approves as `user` (whose
    /// password was checked) or denies. False for an unknown or expired code.
    func decideDevice(userCode: String, approvedBy user: String?) -> Bool {
        let code = userCode.uppercased().filter { $0.isLetter }
        let now = Date().timeIntervalSince1970
        guard let (deviceCode, grant) = deviceGrants.first(where: { $0.value.userCode.filter(\.isLetter) == code }),
              grant.expiresAt > now, case .pending = grant.state else { return false }
        deviceGrants[deviceCode]?.state = user.map { .approved($0) } ?? .denied
        return true
    }

    func checkPassword(user: String, password: String) -> Bool { users[user] == password }

    private func deviceToken(_ deviceCode: String) async -> Outcome {
        counters.devicePolls += 1
        guard var grant = deviceGrants[deviceCode] else {
            counters.rejections += 1
            return .error(status: 400, code: "invalid_grant")
        }
        let now = Date().timeIntervalSince1970
        defer { deviceGrants[deviceCode] = grant }
        // A little slack for the clock: a poll counts as too fast only well inside the interval.
        if let last = grant.lastPoll, now - last < grant.interval - 0.25 { counters.pollsTooFast += 1 }
        grant.lastPoll = now
        if now >= grant.expiresAt {
            return .error(status: 400, code: "expired_token")
        }
        if let remaining = faults.slowDownCount, remaining > 0 {
            faults.slowDownCount = remaining - 1
            counters.slowDowns += 1
            grant.interval += 5
            return .error(status: 400, code: "slow_down")
        }
        switch grant.state {
        case .pending:
            counters.pendingAnswers += 1
            return .error(status: 400, code: "authorization_pending")
        case .denied:
            return .error(status: 400, code: "access_denied")
        case .used:
            counters.rejections += 1
            return .error(status: 400, code: "invalid_grant")
        case .approved(let user):
            grant.state = .used
            deviceGrants[deviceCode] = grant  // before the await: a poll meanwhile finds it used
            counters.deviceGrants += 1
            return await issueNewFamily(subject: user)
        }
    }

    /// A login: tokens that start a new refresh-token family.
    private func issueNewFamily(subject user: String) async -> Outcome {
        let familyID = UUID().uuidString
        let refreshToken = Self.randomToken()
        families[familyID] = Family(subject: user, current: refreshToken)
        familyOfToken[refreshToken] = familyID
        return await issue(subject: user, family: familyID, refreshToken: refreshToken)
    }

    /// RFC 7009: a refresh token (current or rotated) revokes its family.
    /// Unknown tokens are answered alike (§2.2), so nothing is learned.
    func revoke(_ token: String) {
        guard let familyID = familyOfToken[token], families[familyID]?.revoked == false else { return }
        families[familyID]?.revoked = true
        counters.revocations += 1
        counters.familiesRevoked += 1
    }

    /// The token's subject if it is a valid, unrevoked user access token
    /// (orders belong to users: a client token is refused).
    func authorize(_ token: String) async -> String? {
        guard let claims = accessTokens.verify(token), let family = claims.fam else {
            counters.rejections += 1
            return nil
        }
        if families[family]?.revoked ?? true || rejectedAccess.contains(claims.jti) {
            counters.rejections += 1
            return nil
        }
        counters.ordersServed += 1
        return claims.sub
    }

    private func issue(subject: String, family: String?, refreshToken: String?) async -> Outcome {
        let now = Date()
        let jti = UUID().uuidString
        issuedAccess.insert(jti)
        let seconds = now.timeIntervalSince1970
        // Any TTL an admin call or option set (even inf or NaN) makes a whole second in a century.
        let ttl = settings.accessTTL.isFinite ? max(-3e9, min(settings.accessTTL, 3e9)) : 3e9
        let claims = AccessTokens.Claims(sub: subject, exp: Int((seconds + ttl).rounded()),
                                              iat: Int(seconds.rounded()), jti: jti, fam: family)
        guard let accessToken = try? accessTokens.issue(claims, now: now) else {
            return .error(status: 500, code: "server_error")
        }
        return .tokens(accessToken: accessToken, refreshToken: refreshToken, expiresIn: settings.accessTTL)
    }

    private static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in String(generator.next(), radix: 36) }.joined(separator: ".")
    }
}
