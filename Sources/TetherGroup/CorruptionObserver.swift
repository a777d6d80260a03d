import Synchronization

/// Who hears that a store file failed to parse and was moved aside: the
/// process's log (the `store.corrupt` event), set once by whoever has one.
/// The error still goes to the caller; this only says that it happened.
package enum CorruptionObserver {
    package typealias Observer = @Sendable (_ path: String, _ keptAs: String, _ reason: String) -> Void

    /// In a struct, as `Redactor`'s provider: a bare function read out of
    /// a `Mutex` gains a thunk at each read.
    private struct Held: Sendable {
        let body: Observer
    }

    private static let observer = Mutex<Held?>(nil)

    package static func set(_ body: Observer?) {
        observer.withLock { $0 = body.map(Held.init) }
    }

    static func report(path: String, keptAs: String, reason: String) {
        observer.withLock { $0 }?.body(path, keptAs, reason)
    }
}
