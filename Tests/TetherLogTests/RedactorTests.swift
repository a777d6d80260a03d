import Testing
@testable import TetherLog

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
}
