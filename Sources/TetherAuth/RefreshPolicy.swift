/// Who may refresh.
package enum RefreshPolicy: Sendable, Equatable {
    /// Any process refreshes, one at a time under the group's refresh lock.
    case coordinated
    /// Ask the host (over its socket); with no host, refresh coordinated
    /// unless `strict`, which fails with `AuthError.noHost` instead.
    case hostBrokered(strict: Bool)
}
