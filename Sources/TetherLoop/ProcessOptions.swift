/// What to run and how to wire its stdio.
package struct ProcessOptions: Sendable {
    package enum Stdio: Sendable {
        /// Share the parent's descriptor.
        case inherit
        /// Connect to /dev/null.
        case ignore
        /// A new pipe, exposed as a `PipeStream` on the `ChildProcess`.
        case pipe
    }

    /// A path, or a name looked up in `PATH`.
    package var executable: String
    /// Arguments after argv[0].
    package var arguments: [String]
    /// `KEY=VALUE` entries; nil inherits the parent's environment.
    package var environment: [String]?
    package var workingDirectory: String?
    package var stdin: Stdio
    package var stdout: Stdio
    package var stderr: Stdio
    /// Start the child in a session (and process group) of its own.
    package var detached: Bool
    /// Linux: the signal the kernel sends the child when the thread that
    /// spawned it ends (`PR_SET_PDEATHSIG`, set before exec; a parent already
    /// gone fails the spawn with `.noSuchProcess`).
    package var parentDeathSignal: Int32?
    /// The child's soft `RLIMIT_NOFILE` (under the hard limit); nil keeps ours.
    package var descriptorSoftLimit: Int?
    /// Linux: confinement applied last before exec.
    package var confinement: SpawnConfinement?
    /// A descriptor (above 2) the child gets as descriptor 3, kept across
    /// exec, as systemd passes sockets: a link only that child's tree holds.
    package var passedDescriptor: Int32?

    package init(
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
