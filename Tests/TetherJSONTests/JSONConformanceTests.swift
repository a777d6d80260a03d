import Foundation
import Testing
@testable import TetherJSON

/// The JSONTestSuite corpus (github.com/nst/JSONTestSuite, test_parsing/):
/// every y_ file parses, every n_ file is refused; i_ files may go either way
/// but must not crash. Not vendored: set JSON_TEST_SUITE to its test_parsing
/// directory to run it (the number cases it covers are in JSONNumberTests).
@Suite struct JSONConformanceTests {
    static let directory = ProcessInfo.processInfo.environment["JSON_TEST_SUITE"]

    @Test(.enabled(if: directory != nil, "set JSON_TEST_SUITE to JSONTestSuite's test_parsing directory"))
    func acceptsEveryValidAndRefusesEveryInvalidDocument() throws {
        let directory = try #require(Self.directory)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".json") }.sorted()
        #expect(names.count > 300)
        var wrong: [String] = []
        for name in names {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name)))
            let accepted = (try? JSONCodec.parse(bytes)) != nil
            if name.hasPrefix("y_"), !accepted { wrong.append(name) }
            if name.hasPrefix("n_"), accepted { wrong.append(name) }
        }
        #expect(wrong.isEmpty, "\(wrong)")
    }
}
