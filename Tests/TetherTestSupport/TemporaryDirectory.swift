import Foundation

/// A fresh directory per test, so tests can run in parallel; removed on deinit.
public final class TemporaryDirectory: @unchecked Sendable {
    public let path: String

    public init(_ label: String = "tether-test") throws {
        var template = Array("/tmp/\(label).XXXXXX".utf8CString)
        guard let created = template.withUnsafeMutableBufferPointer({ $0.baseAddress.flatMap { mkdtemp($0) } }) else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        path = String(cString: created)
    }

    /// A group directory path inside (not yet created: Tether creates it).
    public var group: String { path + "/group" }

    deinit {
        // Restore permissions a test may have removed, then delete.
        _ = try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: path)
        try? FileManager.default.removeItem(atPath: path)
    }
}
