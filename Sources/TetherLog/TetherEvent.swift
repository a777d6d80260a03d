import Logging
import TetherJSON

/// A named event: what happened, in a name that stays the same from
/// release to release, so a collector or a script can match it (the
/// `event` key of a JSON record). Its metadata says the rest; never a
/// token, a password, a secret or a whole payload. README's "Events"
/// lists them with their metadata.
public struct TetherEvent: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let authLoginSuccess = TetherEvent(rawValue: "auth.login.success")
    public static let authLoginFailure = TetherEvent(rawValue: "auth.login.failure")
    public static let authRefreshSuccess = TetherEvent(rawValue: "auth.refresh.success")
    public static let authRefreshFailure = TetherEvent(rawValue: "auth.refresh.failure")
    public static let authSessionEnded = TetherEvent(rawValue: "auth.session.ended")
    public static let authUserChanged = TetherEvent(rawValue: "auth.user.changed")
    public static let extensionStarted = TetherEvent(rawValue: "extension.started")
    public static let extensionAttached = TetherEvent(rawValue: "extension.attached")
    public static let extensionExited = TetherEvent(rawValue: "extension.exited")
    public static let extensionRestarted = TetherEvent(rawValue: "extension.restarted")
    public static let extensionUnresponsive = TetherEvent(rawValue: "extension.unresponsive")
    public static let extensionFailed = TetherEvent(rawValue: "extension.failed")
    public static let pushDelivered = TetherEvent(rawValue: "push.delivered")
    public static let pushTimedOut = TetherEvent(rawValue: "push.timedOut")
    public static let featureStarted = TetherEvent(rawValue: "feature.started")
    public static let featureStopped = TetherEvent(rawValue: "feature.stopped")
    public static let hostStarted = TetherEvent(rawValue: "host.started")
    public static let hostStopping = TetherEvent(rawValue: "host.stopping")
    public static let storeCorrupt = TetherEvent(rawValue: "store.corrupt")

    public static let all: [TetherEvent] = [
        .authLoginSuccess, .authLoginFailure, .authRefreshSuccess, .authRefreshFailure, .authSessionEnded,
        .authUserChanged, .extensionStarted, .extensionAttached, .extensionExited, .extensionRestarted,
        .extensionUnresponsive, .extensionFailed, .pushDelivered, .pushTimedOut, .featureStarted,
        .featureStopped, .hostStarted, .hostStopping, .storeCorrupt,
    ]
}

extension Logger {
    /// Logs `message` as `event`: the name goes in the `event` key, beside
    /// `metadata`. The text format shows the message alone, as before.
    public func event(_ event: TetherEvent, level: Logger.Level = .info, _ message: @autoclosure () -> String,
                      _ metadata: @autoclosure () -> Logger.Metadata = [:]) {
        guard level >= logLevel else { return }
        var all = metadata()
        all["event"] = .string(event.rawValue)
        log(level: level, "\(message())", metadata: all)
    }
}

extension Logger {
    /// `store.corrupt`: a store file failed to parse and was moved aside.
    public func storeCorrupt(path: String, keptAs: String, reason: String) {
        event(.storeCorrupt, level: .error, "\(path) could not be read (\(reason)); it is kept as \(keptAs)",
              ["path": .string(path), "keptAs": .string(keptAs), "reason": .string(reason)])
    }
}

extension Logger.MetadataValue {
    /// A number that a JSON record keeps a number (not a string).
    public static func number(_ value: some BinaryInteger) -> Logger.MetadataValue {
        .stringConvertible(JSONValue.integer(value))
    }

    public static func number(_ value: Double) -> Logger.MetadataValue {
        .stringConvertible(JSONValue.double(value))
    }

    public static func bool(_ value: Bool) -> Logger.MetadataValue {
        .stringConvertible(JSONValue.bool(value))
    }

    /// Whole milliseconds between two readings of the loop clock.
    public static func milliseconds(from start: UInt64, to end: UInt64) -> Logger.MetadataValue {
        .number(end >= start ? end - start : 0)
    }
}
