import SystemPackage

/// Why a launch was refused its confinement (and so did not run).
enum SandboxRefusal: Error, CustomStringConvertible {
    case missing([String])
    case noTemporaryDirectory(Errno)
    /// Descriptors or memory ran out while its rules were made.
    case shortage(Errno)

    var description: String {
        switch self {
        case .missing(let what):
            "--require-sandbox, and this kernel cannot confine it: missing \(what.joined(separator: "; "))"
        case .noTemporaryDirectory(let error):
            "cannot make its temporary directory: \(error)"
        case .shortage(let error):
            "cannot make its confinement's rules: \(error)"
        }
    }
}
