/// A manifest that cannot be used, as one sentence naming the file and field.
package struct ManifestError: Error, Sendable, Equatable, CustomStringConvertible {
    package let file: String
    package let field: String?
    package let problem: String

    package init(file: String, field: String?, problem: String) {
        self.file = file
        self.field = field
        self.problem = problem
    }

    package var description: String {
        if let field { return "\(file): \"\(field)\" \(problem)" }
        return "\(file) \(problem)"
    }
}
