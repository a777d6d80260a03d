import TetherGroup

/// Why no token could be had, as one sentence with no secret in it.
package enum AuthError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Nobody is logged in (or the wanted token kind is missing).
    case notAuthenticated
    /// The server refused the refresh token and nobody else had rotated it:
    /// the user session was ended in the store (the client token is kept).
    case sessionEnded
    /// The server could not be reached or answered 5xx/429 through every
    /// retry; everything stored was kept.
    case temporarilyUnavailable(TokenEndpointError)
    /// The server refused for a reason retrying cannot fix.
    case refused(TokenEndpointError)
    /// The user token expired and the server never gave a refresh token.
    case cannotRefresh
    /// A host-brokered policy set strict, with no host to ask.
    case noHost
    /// Another process has held the refresh lock for `seconds` (stopped or
    /// hung); nothing was changed, so a later try may succeed.
    case refreshStalled(seconds: Int)
    case store(GroupError)
    /// The group keeps its secrets in the keyring, which could not be used
    /// (locked, or no Secret Service answers); nothing was lost.
    case keyring(KeyringError)

    package var description: String {
        switch self {
        case .notAuthenticated:
            "not logged in: run 'tether login' first"
        case .sessionEnded:
            "the session has ended (the server refused the refresh token): log in again"
        case .temporarilyUnavailable(let error):
            "no fresh token for now, nothing was lost: \(error)"
        case .refused(let error):
            "\(error)"
        case .cannotRefresh:
            "the user token has expired and the server gave no refresh token to renew it; log in again"
        case .noHost:
            "no host is running to refresh the token, and this extension's policy is host-brokered (strict)"
        case .refreshStalled(let seconds):
            "another process has been refreshing the token for \(seconds) s and may be stopped or hung; nothing was lost, try again later"
        case .store(let error):
            "\(error)"
        case .keyring(let error):
            "the keyring holding this group's secrets cannot be used (\(error)); nothing was lost: unlock it and try again"
        }
    }
}
