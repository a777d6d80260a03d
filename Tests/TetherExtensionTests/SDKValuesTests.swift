import Foundation
import Testing
import TetherGroup
import TetherTestSupport
@testable import TetherExtension

/// The values an author handles, without a host: notification content,
/// reload policies, errors, and the group's defaults on real files.
@Suite struct SDKValuesTests {
    @Test func notificationContentReadsAndWritesItsFields() {
        var content = NotificationContent(["title": "Order shipped", "body": 42, "id": "a1"])
        #expect(content.title == "Order shipped")
        // A field that is not a string is no body, and is kept as it is.
        #expect(content.body == nil)
        content.body = "#42 is on its way"
        content.title = nil
        #expect(content.fields["title"] == nil)
        #expect(content["body"] == "#42 is on its way")
        content["urgency"] = "high"
        #expect(content != NotificationContent(["id": "a1"]))
        #expect(content.fields.keys.sorted() == ["body", "id", "urgency"])
    }

    @Test func reloadPoliciesDescribeThemselves() {
        #expect(ReloadPolicy.atEnd.description == "at end")
        #expect(ReloadPolicy.never.description == "never")
        #expect(ReloadPolicy.after(Date(timeIntervalSince1970: 0)).description == "after 1970-01-01T00:00:00Z")
        #expect(ReloadReason(rawValue: "defaults") == .defaults)
    }

    @Test func errorsAreOneSentenceEach() {
        #expect(ExtensionError.hostNotRunning.description == "host is not running")
        #expect(ExtensionError.readOnly(extension: "kb").description.contains("\"openAccess\": true"))
        #expect(ExtensionError.invalidName("A/b").description.hasPrefix("invalid name 'A/b'"))
        #expect(ExtensionError.refused("no").description == "no")
    }

    /// `context.defaults` reads by subscript, and every failure is an
    /// ExtensionError that says what went wrong.
    @Test func sharedDefaultsReadWriteAndRemoveOnTheGroupsStore() throws {
        let directory = try TemporaryDirectory()
        let group = try GroupDirectory(path: directory.path + "/group")
        let defaults = SharedDefaults(store: try SharedStore.defaults(in: group))
        #expect(try defaults["greeting"] == nil)
        try defaults.set("Howdy", forKey: "greeting")
        #expect(try defaults["greeting"]?.stringValue == "Howdy")
        #expect(try defaults.value(forKey: "greeting") == "Howdy")
        #expect(try defaults.values() == ["greeting": "Howdy"])
        #expect(try defaults.removeValue(forKey: "greeting"))
        #expect(try !defaults.removeValue(forKey: "greeting"))
        // A key the store refuses is an error with the store's reason.
        #expect(throws: ExtensionError.self) { try defaults.set(1, forKey: "") }
        // A file that is not the store's (a directory in its place) too.
        try FileManager.default.removeItem(atPath: defaults.store.path)
        try FileManager.default.createDirectory(atPath: defaults.store.path, withIntermediateDirectories: false)
        #expect(throws: ExtensionError.self) { try defaults["greeting"] }
    }
}
