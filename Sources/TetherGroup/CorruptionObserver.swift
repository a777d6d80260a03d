import Synchronization

/// Who hears that a store file failed to parse and was moved aside: the
/// process's log (the `store.corrupt` event), set once by whoever has one.
/// The error still goes to the caller; this only says that it happened.
public enum CorruptionObserver {
    public typealias Observer = @Sendable (_ path: String, _ keptAs: String, _ reason: String) -> Void

    private static let observer = Mutex<Observer?>(nil)

    public static func set(_ body: Observer?) {
        observer.withLock { $0 = body }
    }

    static func report(path: String, keptAs: String, reason: String) {
        observer.withLock { $0 }?(path, keptAs, reason)
    }
}
