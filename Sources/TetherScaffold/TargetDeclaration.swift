/// The new extension's target, as it goes into Package.swift.
struct TargetDeclaration {
    let name: String
    /// `.product(name: "TetherExtension", package: "ID")`, or the target's name inside Tether.
    let sdk: String
    let plugin: String

    var singleLine: String {
        ".executableTarget(name: \"\(name)\", dependencies: [\(sdk)], plugins: [\(plugin)])"
    }

    /// `text` with the target `swift package add-target` just wrote
    /// (`.executableTarget(name: "NAME")`, exactly once) replaced by this
    /// declaration, laid out like the list it is in; nil if it is not there
    /// in that form.
    func replacingToolchainTarget(in text: String) -> String? {
        let written = ".executableTarget(name: \"\(name)\")"
        let bytes = Array(text.utf8)
        let needle = Array(written.utf8)
        var matches: [Int] = []
        var index = 0
        while index + needle.count <= bytes.count {
            if bytes[index..<(index + needle.count)].elementsEqual(needle) { matches.append(index) }
            index += 1
        }
        guard matches.count == 1, let start = matches.first else { return nil }
        // Alone on its line: one argument a line, indented under it.
        let lineStart = bytes[..<start].lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
        let before = bytes[lineStart..<start]
        let replacement: String
        if before.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) {
            let indent = String(decoding: before, as: UTF8.self)
            let step = before.last == UInt8(ascii: "\t") ? "\t" : "    "
            replacement = """
                .executableTarget(
                \(indent)\(step)name: "\(name)",
                \(indent)\(step)dependencies: [\(sdk)],
                \(indent)\(step)plugins: [\(plugin)]
                \(indent))
                """
        } else {
            replacement = singleLine
        }
        return String(decoding: bytes[..<start], as: UTF8.self) + replacement
            + String(decoding: bytes[(start + needle.count)...], as: UTF8.self)
    }
}
