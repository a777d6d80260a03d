/// What a failed `new-extension` did with what it had begun, said after
/// why it failed: the author is told what to do by hand, and never that
/// something was put back that was not.
enum Restoration {
    /// Package.swift as it was; `sourcesLeft`: Sources/NAME could not be removed.
    case putBack(sourcesLeft: Bool)
    /// Package.swift changed while this ran, not only by this run: it and
    /// Sources/NAME are left as they are.
    case leftAsIs
    /// Package.swift could not be written back (the reason).
    case notPutBack(String)

    /// The rest of the sentence, with the element the author may add.
    func sentence(_ declaration: TargetDeclaration) -> String {
        let name = declaration.name
        switch self {
        case .putBack(let sourcesLeft):
            let sources = sourcesLeft ? "Sources/\(name) could not be removed" : "no Sources/\(name) is left"
            return "Package.swift is as it was, and \(sources). Add this element to the `targets: [...]` list of "
                + "its `Package(...)`, and Sources/\(name)/ by hand: \(declaration.singleLine)"
        case .leftAsIs:
            return "Package.swift changed while this ran (by add-target or another program), so it and Sources/\(name) "
                + "were left as they are: its targets should hold this element: \(declaration.singleLine)"
        case .notPutBack(let reason):
            return "Package.swift could not be put back (\(reason)): remove the target \(name) from it, and Sources/\(name), by hand"
        }
    }
}
