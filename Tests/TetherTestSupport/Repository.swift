import Foundation

/// This checkout, found from this file's place in it
/// (Tests/TetherTestSupport/): the examples, documents and nested packages
/// the tests read.
package enum Repository {
    package static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path

    /// `relative` (as "examples/python-notification") in the checkout.
    package static func path(_ relative: String) -> String { root + "/" + relative }
}
