import TetherLoop

/// What every supervisor of a host shares, and none owns: the loop, the
/// reaper, the sandbox, the launch slots, the grace and the metrics. One
/// value handed to each, so a supervisor's own state is what is its own.
struct SupervisorResources {
    let loop: EventLoop
    /// Ends a launch's group if the host dies (PDEATHSIG reaches the main process only).
    let reaper: GroupReaper
    /// Confinement and a private temporary directory, per launch.
    let sandbox: ExtensionSandbox
    /// What the host's descriptors leave room for: one a launch.
    let slots: LaunchSlots
    /// From SIGTERM to SIGKILL when a launch is ended.
    let graceMilliseconds: UInt64
    let metrics: HostMetrics
}
