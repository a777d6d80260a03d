import Synchronization
import Testing
@testable import TetherLog
#if canImport(Glibc)
import Glibc
#endif

@Suite struct RedactorTests {
    @Test func jwtsAndRegisteredSecretsNeverReachTheOutput() {
        let redactor = Redactor()
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLWJ5dGVz"
        #expect(redactor.redact("token \(jwt) end") == "token [redacted] end")
        #expect(redactor.redact("Bearer \(jwt)") == "Bearer [redacted]")
        // Not a JWT: one dot, or a word that merely starts with eyJ.
        #expect(redactor.redact("eyJust.kidding") == "eyJust.kidding")

        redactor.register("opaque-refresh-4f9a")
        redactor.register("short")  // too short to redact safely
        #expect(redactor.redact("rt=opaque-refresh-4f9a;rt2=opaque-refresh-4f9a") == "rt=[redacted];rt2=[redacted]")
        #expect(redactor.redact("a short line") == "a short line")

        redactor.setProvider { ["from-the-store-1234"] }
        #expect(redactor.redact("x from-the-store-1234 y") == "x [redacted] y")
    }

    /// A record must not cost more than the one before it: reading the
    /// provider out of its lock once wrapped it in one more thunk, kept,
    /// so the call stack under the provider grew by a level per record.
    @Test func theProviderIsCalledThroughTheSameStackAtEveryRecord() {
        let redactor = Redactor(providerInterval: 0)
        let depths = Mutex<[Int32]>([])
        redactor.setProvider {
            var frames = [UnsafeMutableRawPointer?](repeating: nil, count: 256)
            let depth = frames.withUnsafeMutableBufferPointer { stackTrace($0.baseAddress, 256) }
            depths.withLock { $0.append(depth) }
            return []
        }
        for _ in 0..<500 { _ = redactor.redact("a line") }
        let seen = depths.withLock { $0 }
        #expect(seen.count == 500)
        #expect(Set(seen).count == 1, "stack depths \(seen.first ?? 0) … \(seen.last ?? 0)")
    }
}

/// A writer swapping large credential stores under the host must not make
/// every log record a store read (issue 55): the provider is asked at most
/// four times a second, and only its first 64 secrets are matched.
@Suite struct RedactorProviderBoundsTests {
    @Test func theProviderIsAskedAtMostFourTimesASecond() {
        let redactor = Redactor()
        let asked = Mutex(0)
        redactor.setProvider {
            asked.withLock { $0 += 1 }
            return ["from-the-store-1234"]
        }
        var start = timespec(), end = timespec()
        clock_gettime(CLOCK_MONOTONIC, &start)
        for _ in 0..<2_000 { #expect(redactor.redact("x from-the-store-1234") == "x [redacted]") }
        clock_gettime(CLOCK_MONOTONIC, &end)
        let elapsed = Double(end.tv_sec - start.tv_sec) + Double(end.tv_nsec - start.tv_nsec) / 1e9
        let calls = asked.withLock { $0 }
        #expect(calls >= 1 && calls <= 1 + Int(elapsed * 4) + 1, "\(calls) reads in \(elapsed) s")
    }

    @Test func atMostSixtyFourProvidedSecretsAreMatched() {
        let redactor = Redactor()
        redactor.setProvider { (0..<1_000).map { "s\($0)-secret-end" } }
        #expect(redactor.redact("s63-secret-end!") == "[redacted]!")
        #expect(redactor.redact("s64-secret-end!") == "s64-secret-end!")
    }

    /// A host registers every token it hands out, for its whole life: the
    /// latest 128 are kept (one registered again counts as new), so each
    /// record costs a bounded number of passes however long it runs.
    @Test func theLatestRegisteredSecretsAreKept() {
        let redactor = Redactor()
        let secret = { (number: Int) in "token-\(number)-rotated" }
        for number in 0..<10_000 { redactor.register(secret(number)) }
        redactor.register(secret(9_800))
        #expect(redactor.redact(secret(9_999)) == Redactor.replacement)
        #expect(redactor.redact(secret(9_800)) == Redactor.replacement, "registered again: the latest")
        #expect(redactor.redact(secret(9_873)) == Redactor.replacement)
        #expect(redactor.redact(secret(9_872)) == secret(9_872), "past the 128 latest")
        #expect(redactor.redact(secret(0)) == secret(0))
    }
}

/// glibc's `backtrace(3)` (execinfo.h is not in the Glibc module).
@_silgen_name("backtrace")
private func stackTrace(_ buffer: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ size: Int32) -> Int32
