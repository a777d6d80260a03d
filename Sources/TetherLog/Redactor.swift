import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The log handler's last line of defence: anything that looks like a JWT,
/// and every secret a process has registered (stored refresh tokens, opaque
/// access tokens, client secrets), is replaced by `[redacted]` before a
/// record reaches the output. Code should never log a secret; this catches
/// the day it does, or an extension prints one.
package final class Redactor: Sendable {
    package static let shared = Redactor()
    package static let replacement = "[redacted]"

    /// Secrets shorter than this are not registered: replacing every
    /// occurrence of a 3-character string would garble ordinary text.
    static let minimumSecretLength = 8

    /// Registered secrets, and their order (the oldest first).
    private let secrets = Mutex<(known: Set<String>, order: [String])>(([], []))
    /// At most this many registered secrets are kept, the latest: a host
    /// registers every token it hands out (a new one at each rotation),
    /// and each costs a pass over every record, for the host's whole life.
    static let maximumRegisteredSecrets = 128
    /// Called at each record to learn the current secrets (a process that
    /// reads the credential store registers a reader here).
    private let provider = Mutex<Provider?>(nil)

    /// The function in a struct: a bare function value read out of a
    /// `Mutex` (`withLock { $0 }`) comes back in one more reabstraction
    /// thunk, kept, so each record would call through one more level than
    /// the last (Swift 6.3): a long-lived host's log grew dear, then deep.
    private struct Provider: Sendable {
        let body: @Sendable () -> [String]
        /// What it last returned, and when (monotonic nanoseconds).
        var secrets: [String] = []
        var askedAt: UInt64?
    }

    /// The provider is asked at most this often: whatever a writer does
    /// to the store it reads (two large ones swapped at every record),
    /// the log costs at most four reads a second. A secret stored since
    /// is caught from the next read on; JWTs always are.
    package static let providerIntervalNanoseconds: UInt64 = 250_000_000
    private let providerInterval: UInt64
    /// At most this many provided secrets are matched per record, the
    /// first in the provider's order: each costs a pass over the record.
    static let maximumProvidedSecrets = 64

    /// `providerInterval`: how often at most the provider is asked.
    package init(providerInterval: UInt64 = Redactor.providerIntervalNanoseconds) {
        self.providerInterval = providerInterval
    }

    package func register(_ secret: String) {
        guard secret.utf8.count >= Self.minimumSecretLength else { return }
        secrets.withLock { secrets in
            if !secrets.known.insert(secret).inserted { secrets.order.removeAll { $0 == secret } }
            secrets.order.append(secret)
            if secrets.order.count > Self.maximumRegisteredSecrets { secrets.known.remove(secrets.order.removeFirst()) }
        }
    }

    /// `body` returns secrets to redact, asked at most four times a second
    /// (`providerIntervalNanoseconds`).
    package func setProvider(_ body: (@Sendable () -> [String])?) {
        provider.withLock { $0 = body.map { Provider(body: $0) } }
    }

    package func redact(_ text: String) -> String {
        var known = secrets.withLock { $0.known }
        for secret in providedSecrets() { known.insert(secret) }
        var bytes = Array(text.utf8)
        var changed = Self.redactJWTs(&bytes)
        for secret in known where Self.replace(Array(secret.utf8), in: &bytes) { changed = true }
        return changed ? String(decoding: bytes, as: UTF8.self) : text
    }

    /// The provider's secrets, asked afresh at most every
    /// `providerInterval` (under the lock: one read at a time).
    private func providedSecrets() -> [String] {
        provider.withLock { provider in
            guard provider != nil else { return [] }
            let now = Self.monotonicNanoseconds()
            if let askedAt = provider?.askedAt, now &- askedAt < providerInterval {
                return provider?.secrets ?? []
            }
            let fresh = (provider?.body() ?? []).lazy.filter { $0.utf8.count >= Self.minimumSecretLength }
                .prefix(Self.maximumProvidedSecrets)
            provider?.secrets = Array(fresh)
            provider?.askedAt = now
            return provider?.secrets ?? []
        }
    }

    private static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
    }

    /// `eyJ...` segments joined by dots, three or more: a JWS or JWE. The
    /// header of every JWT is base64url JSON starting with `{"`, so `eyJ`.
    static func redactJWTs(_ bytes: inout [UInt8]) -> Bool {
        var changed = false
        var index = 0
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "e"), index + 3 <= bytes.count,
               bytes[index + 1] == UInt8(ascii: "y"), bytes[index + 2] == UInt8(ascii: "J"),
               index == 0 || !isBase64URL(bytes[index - 1]) {
                var end = index
                var dots = 0
                while end < bytes.count, isBase64URL(bytes[end]) || bytes[end] == UInt8(ascii: ".") {
                    if bytes[end] == UInt8(ascii: ".") { dots += 1 }
                    end += 1
                }
                if dots >= 2 && end - index >= 16 {
                    output += Array(replacement.utf8)
                    index = end
                    changed = true
                    continue
                }
            }
            output.append(bytes[index])
            index += 1
        }
        if changed { bytes = output }
        return changed
    }

    static func isBase64URL(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "="):
            return true
        default:
            return false
        }
    }

    static func replace(_ needle: [UInt8], in bytes: inout [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= bytes.count else { return false }
        var output: [UInt8] = []
        var index = 0
        var changed = false
        let first = needle[0]
        while index < bytes.count {
            if bytes[index] == first, index + needle.count <= bytes.count,
               bytes[index..<(index + needle.count)].elementsEqual(needle) {
                if !changed { output.reserveCapacity(bytes.count); output += bytes[0..<index] }
                output += Array(replacement.utf8)
                index += needle.count
                changed = true
                continue
            }
            if changed { output.append(bytes[index]) }
            index += 1
        }
        if changed { bytes = output }
        return changed
    }
}
