/// Names a new extension's type and target cannot take although they are
/// well formed: the package would load (`dump-package` sees no clash) and
/// then fail to build. Swift's keywords; the modules its target sees (a
/// target of a module's name clashes with it in the graph); the names its
/// template's code uses, which the new type would shadow.
enum ReservedNames {
    /// Why `name` cannot name `template`'s type, or nil.
    static func reason(_ name: String, template: ExtensionTemplate) -> String? {
        if keywords.contains(name) { return "a Swift keyword" }
        if modules.contains(name) { return "a module the new target sees" }
        let placeholder = "NewExtensionPlaceholder"
        var used = identifiers(in: ExtensionTemplate(typeName: placeholder, role: template.role).source)
        used.remove(placeholder)
        if used.contains(name) { return "a name the \(template.role.rawValue) template's code uses" }
        return nil
    }

    /// Swift's reserved words, and the types every scope has.
    static let keywords: Set = [
        "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import", "init", "inout",
        "internal", "let", "open", "operator", "private", "precedencegroup", "protocol", "public", "rethrows",
        "static", "struct", "subscript", "typealias", "var", "break", "case", "catch", "continue", "default",
        "defer", "do", "else", "fallthrough", "for", "guard", "if", "in", "repeat", "return", "throw", "switch",
        "where", "while", "as", "false", "is", "nil", "self", "super", "throws", "true", "try", "Any", "Self",
        "Type", "Protocol",
    ]

    /// The toolchain's modules a target loads, and the graph of the SDK and
    /// of Tether's plugins (a test checks these against Tether's own
    /// `dump-package`).
    static let modules: Set = [
        "Swift", "SwiftShims", "SwiftGlibc", "SwiftOnoneSupport", "_Concurrency", "_StringProcessing", "Synchronization",
        "Foundation", "FoundationEssentials", "FoundationInternationalization", "CoreFoundation", "Glibc", "Musl",
        "Dispatch",
        "TetherExtension", "TetherAuth", "TetherBus", "TetherGroup", "TetherHTTP", "TetherIPC", "TetherRPC", "TetherJSON",
        "TetherLog", "TetherLoop", "TetherManifest", "TetherSandbox", "TetherManifestTool", "TetherManifestPlugin",
        "TetherScaffold", "TetherScaffoldTool", "NewExtension",
        "CLibUV", "CTetherSystem", "CTetherCurl", "CTetherBus", "CSeccomp", "Logging", "SystemPackage", "CSystem",
    ]

    /// Every identifier in `code` (letters, digits and underscores, not
    /// starting with a digit) outside comments and string literals, but
    /// inside an interpolation's `\(…)`: a word of a comment or a string is
    /// no name the code uses.
    static func identifiers(in code: String) -> Set<String> {
        var found: Set<String> = []
        let bytes = Array(code.utf8)
        var current: [UInt8] = []
        var inString = false
        var interpolations: [Int] = []  // for each open `\(`, its parentheses still open
        var index = 0
        func flush() {
            if !current.isEmpty { found.insert(String(decoding: current, as: UTF8.self)) }
            current = []
        }
        while index < bytes.count {
            let byte = bytes[index]
            let next: UInt8 = index + 1 < bytes.count ? bytes[index + 1] : 0
            if inString {
                if byte == 0x5c, next == 0x28 {  // \(
                    interpolations.append(0)
                    inString = false
                    index += 2
                    continue
                }
                if byte == 0x5c { index += 2; continue }
                if byte == 0x22 { inString = false }
                index += 1
                continue
            }
            if byte == 0x2f, next == 0x2f {  // a comment, to the line's end
                flush()
                while index < bytes.count, bytes[index] != 0x0a { index += 1 }
                continue
            }
            let isLetter = (0x41...0x5a).contains(byte) || (0x61...0x7a).contains(byte) || byte == 0x5f
            if isLetter || (!current.isEmpty && (0x30...0x39).contains(byte)) {
                current.append(byte)
                index += 1
                continue
            }
            flush()
            if byte == 0x22 {
                inString = true
            } else if let open = interpolations.last, byte == 0x28 {
                interpolations[interpolations.count - 1] = open + 1
            } else if let open = interpolations.last, byte == 0x29 {
                if open == 0 {
                    interpolations.removeLast()
                    inString = true
                } else {
                    interpolations[interpolations.count - 1] = open - 1
                }
            }
            index += 1
        }
        flush()
        return found
    }
}
