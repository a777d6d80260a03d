/// A manifest that cannot be used, as one sentence naming the file and field.
public struct ManifestError: Error, Sendable, Equatable, CustomStringConvertible {
    public let file: String
    public let field: String?
    public let problem: String

    public init(file: String, field: String?, problem: String) {
        self.file = file
        self.field = field
        self.problem = problem
    }

    public var description: String {
        if let field { return "\(file): \"\(field)\" \(problem)" }
        return "\(file) \(problem)"
    }
}
