/// What to run and how to wire its stdio.
public struct ProcessOptions: Sendable {
    public enum Stdio: Sendable {
        /// Share the parent's descriptor.
        case inherit
        /// Connect to /dev/null.
        case ignore
        /// A new pipe, exposed as a `PipeStream` on the `ChildProcess`.
        case pipe
    }

    /// A path, or a name looked up in `PATH`.
    public var executable: String
    /// Arguments after argv[0].
    public var arguments: [String]
    /// `KEY=VALUE` entries; nil inherits the parent's environment.
    public var environment: [String]?
    public var workingDirectory: String?
    public var stdin: Stdio
    public var stdout: Stdio
    public var stderr: Stdio
    /// Start the child in a session (and process group) of its own.
    public var detached: Bool

    public init(
        executable: String,
        arguments: [String] = [],
        environment: [String]? = nil,
        workingDirectory: String? = nil,
        stdin: Stdio = .inherit,
        stdout: Stdio = .inherit,
        stderr: Stdio = .inherit,
        detached: Bool = false
    ) {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.workingDirectory = workingDirectory
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr
        self.detached = detached
    }
}
