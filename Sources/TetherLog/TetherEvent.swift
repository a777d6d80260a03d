import Logging
import TetherJSON

/// A named event: what happened, in a name that stays the same from
/// release to release, so a collector or a script can match it (the
/// `event` key of a JSON record). Its metadata says the rest; never a
/// token, a password, a secret or a whole payload. README's "Events"
/// lists them with their metadata.
package struct TetherEvent: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    package let rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }
    package var description: String { rawValue }

    package static let authLoginSuccess = TetherEvent(rawValue: "auth.login.success")
    package static let authLoginFailure = TetherEvent(rawValue: "auth.login.failure")
    package static let authRefreshSuccess = TetherEvent(rawValue: "auth.refresh.success")
    package static let authRefreshFailure = TetherEvent(rawValue: "auth.refresh.failure")
    package static let authSessionEnded = TetherEvent(rawValue: "auth.session.ended")
    package static let authUserChanged = TetherEvent(rawValue: "auth.user.changed")
    package static let extensionStarted = TetherEvent(rawValue: "extension.started")
    package static let extensionAttached = TetherEvent(rawValue: "extension.attached")
    package static let extensionExited = TetherEvent(rawValue: "extension.exited")
    package static let extensionRestarted = TetherEvent(rawValue: "extension.restarted")
    package static let extensionUnresponsive = TetherEvent(rawValue: "extension.unresponsive")
    package static let extensionFailed = TetherEvent(rawValue: "extension.failed")
    package static let pushDelivered = TetherEvent(rawValue: "push.delivered")
    package static let pushTimedOut = TetherEvent(rawValue: "push.timedOut")
    package static let featureStarted = TetherEvent(rawValue: "feature.started")
    package static let featureStopped = TetherEvent(rawValue: "feature.stopped")
    package static let hostStarted = TetherEvent(rawValue: "host.started")
    package static let hostStopping = TetherEvent(rawValue: "host.stopping")
    package static let storeCorrupt = TetherEvent(rawValue: "store.corrupt")

    package static let all: [TetherEvent] = [
        .authLoginSuccess, .authLoginFailure, .authRefreshSuccess, .authRefreshFailure, .authSessionEnded,
        .authUserChanged, .extensionStarted, .extensionAttached, .extensionExited, .extensionRestarted,
        .extensionUnresponsive, .extensionFailed, .pushDelivered, .pushTimedOut, .featureStarted,
        .featureStopped, .hostStarted, .hostStopping, .storeCorrupt,
    ]
}

extension Logger {
    /// Logs `message` as `event`: the name goes in the `event` key, beside
    /// `metadata`. The text format shows the message alone, as before.
    package func event(_ event: TetherEvent, level: Logger.Level = .info, _ message: @autoclosure () -> String,
                       _ metadata: @autoclosure () -> Logger.Metadata = [:]) {
        guard level >= logLevel else { return }
        var all = metadata()
        all["event"] = .string(event.rawValue)
        log(level: level, "\(message())", metadata: all)
    }
}

extension Logger {
    /// `store.corrupt`: a store file failed to parse and was moved aside.
    package func storeCorrupt(path: String, keptAs: String, reason: String) {
        event(.storeCorrupt, level: .error, "\(path) could not be read (\(reason)); it is kept as \(keptAs)",
              ["path": .string(path), "keptAs": .string(keptAs), "reason": .string(reason)])
    }
}

extension Logger.MetadataValue {
    /// A number that a JSON record keeps a number (not a string).
    package static func number(_ value: some BinaryInteger) -> Logger.MetadataValue {
        .stringConvertible(JSONValue.integer(value))
    }

    package static func number(_ value: Double) -> Logger.MetadataValue {
        .stringConvertible(JSONValue.double(value))
    }

    package static func bool(_ value: Bool) -> Logger.MetadataValue {
        .stringConvertible(JSONValue.bool(value))
    }

    /// Whole milliseconds between two readings of the loop clock.
    package static func milliseconds(from start: UInt64, to end: UInt64) -> Logger.MetadataValue {
        .number(end >= start ? end - start : 0)
    }
}
