/// What the credential store can do for a caller right now.
public enum AuthState: String, Sendable, CaseIterable {
    /// No tokens at all: `tether login` first.
    case notAuthenticated
    /// Only a client token (client_credentials), as after a logout.
    case clientAuthenticated
    /// A user's token set; the client token, if any, is kept beside it.
    case userAuthenticated
}

/// Which token set a caller wants.
package enum TokenKind: String, Sendable, CaseIterable {
    /// The application's own token (client_credentials grant).
    case client
    /// The signed-in user's token (password grant, then refresh_token).
    case user
}
