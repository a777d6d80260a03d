import TetherLoop

/// Who hears that a store file failed to parse and was moved aside: the
/// process's log (the `store.corrupt` event), set once by whoever has one.
/// The error still goes to the caller; this only says that it happened.
package enum CorruptionObserver {
    package typealias Observer = @Sendable (_ path: String, _ keptAs: String, _ reason: String) -> Void

    private static let observer = LockedAction<(path: String, keptAs: String, reason: String)>()

    package static func set(_ body: Observer?) {
        observer.set(body.map { body in { @Sendable in body($0.path, $0.keptAs, $0.reason) } })
    }

    static func report(path: String, keptAs: String, reason: String) {
        observer((path, keptAs, reason))
    }
}
