import Foundation
import Testing
import TetherTestSupport

/// Every relative link in the project's Markdown (the README, `docs/`, the
/// DocC catalogs) leads to a file that exists, and every `#anchor` to a
/// heading there (as GitHub names it).
@Suite struct LinkTests {
    /// The Markdown files a reader meets, relative to the repository.
    static var pages: [String] {
        var pages = ["README.md"]
        let enumerator = FileManager.default.enumerator(atPath: Repository.root)
        while let path = enumerator?.nextObject() as? String {
            if path.hasPrefix(".") || path.contains("/.build") { enumerator?.skipDescendants(); continue }
            if path.hasSuffix(".md"), path.hasPrefix("docs/") || path.contains(".docc/") { pages.append(path) }
        }
        return pages
    }

    @Test func everyRelativeLinkResolves() throws {
        var broken: [String] = []
        let pages = Self.pages
        #expect(pages.count > 10, "\(pages)")
        for page in pages {
            let text = try String(contentsOfFile: Repository.path(page), encoding: .utf8)
            let directory = (page as NSString).deletingLastPathComponent
            for target in Self.links(in: text) where !target.contains("://") && !target.hasPrefix("mailto:") {
                let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                let file = parts[0].isEmpty ? page : ((directory as NSString).appendingPathComponent(parts[0]) as NSString).standardizingPath
                let path = Repository.path(file)
                guard FileManager.default.fileExists(atPath: path) else {
                    broken.append("\(page): \(target) (no \(file))")
                    continue
                }
                if parts.count == 2, file.hasSuffix(".md") {
                    let anchors = Self.anchors(in: try String(contentsOfFile: path, encoding: .utf8))
                    if !anchors.contains(parts[1]) { broken.append("\(page): \(target) (no heading #\(parts[1]) in \(file))") }
                }
            }
        }
        #expect(broken.isEmpty, "\(broken.joined(separator: "\n"))")
    }

    /// The README stays a front page.
    @Test func theReadmeIsAtMostThreeHundredLines() throws {
        let readme = try String(contentsOfFile: Repository.path("README.md"), encoding: .utf8)
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).count
        #expect(lines <= 300, "\(lines) lines")
    }

    /// `[text](target)` outside code blocks and code spans.
    static func links(in text: String) -> [String] {
        var targets: [String] = []
        var inBlock = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inBlock.toggle(); continue }
            guard !inBlock else { continue }
            // Code spans hold examples, not links.
            let prose = line.split(separator: "`", omittingEmptySubsequences: false).enumerated()
                .filter { $0.offset % 2 == 0 }.map(\.element).joined(separator: " ")
            var rest = Substring(prose)
            while let open = rest.range(of: "](") {
                let after = rest[open.upperBound...]
                guard let close = after.firstIndex(of: ")") else { break }
                targets.append(String(after[..<close]))
                rest = after[close...]
            }
        }
        return targets
    }

    /// GitHub's anchors: each heading lowercased, code marks and
    /// punctuation dropped but `-` and `_`, spaces as `-`.
    static func anchors(in text: String) -> Set<String> {
        var anchors: Set<String> = []
        var inBlock = false
        for line in text.split(separator: "\n") {
            if line.hasPrefix("```") { inBlock.toggle(); continue }
            guard !inBlock, line.hasPrefix("#") else { continue }
            let title = line.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces)
            anchors.insert(String(title.lowercased().compactMap { character -> Character? in
                if character == " " { return "-" }
                if character.isLetter || character.isNumber || character == "-" || character == "_" { return character }
                return nil
            }))
        }
        return anchors
    }
}
