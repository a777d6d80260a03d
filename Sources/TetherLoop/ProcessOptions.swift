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
    /// Linux: the signal the kernel sends the child when the thread that
    /// spawned it ends (`PR_SET_PDEATHSIG`, set before exec; a parent already
    /// gone fails the spawn with `.noSuchProcess`).
    public var parentDeathSignal: Int32?
    /// The child's soft `RLIMIT_NOFILE` (under the hard limit); nil keeps ours.
    public var descriptorSoftLimit: Int?
    /// Linux: confinement applied last before exec.
    public var confinement: SpawnConfinement?
    /// A descriptor (above 2) the child gets as descriptor 3, kept across
    /// exec, as systemd passes sockets: a link only that child's tree holds.
    public var passedDescriptor: Int32?

    public init(
        executable: String,
        arguments: [String] = [],
        environment: [String]? = nil,
        workingDirectory: String? = nil,
        stdin: Stdio = .inherit,
        stdout: Stdio = .inherit,
        stderr: Stdio = .inherit,
        detached: Bool = false,
        parentDeathSignal: Int32? = nil,
        descriptorSoftLimit: Int? = nil,
        confinement: SpawnConfinement? = nil,
        passedDescriptor: Int32? = nil
    ) {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.workingDirectory = workingDirectory
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr
        self.detached = detached
        self.parentDeathSignal = parentDeathSignal
        self.descriptorSoftLimit = descriptorSoftLimit
        self.confinement = confinement
        self.passedDescriptor = passedDescriptor
    }
}
