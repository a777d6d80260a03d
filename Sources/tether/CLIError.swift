import TetherGroup

/// A failure with its exit code from the contract in docs/commands.md:
/// 1 not running / refused / timed out, 2 bad usage or input, 3 environment
/// or I/O. The message is one sentence, printed to stderr.
struct CLIError: Error {
    enum Code: Int32 {
        case refused = 1
        case badInput = 2
        case environment = 3
    }

    let code: Code
    let message: String

    static func refused(_ message: String) -> CLIError { CLIError(code: .refused, message: message) }
    static func badInput(_ message: String) -> CLIError { CLIError(code: .badInput, message: message) }
    static func environment(_ message: String) -> CLIError { CLIError(code: .environment, message: message) }

    init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    init(_ error: GroupError) {
        self.init(code: error.isBadInput ? .badInput : .environment, message: error.description)
    }
}
