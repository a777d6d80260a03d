import CTetherSystem

/// Which confinement mechanisms this kernel offers, probed once per process.
public struct KernelSupport: Sendable, Equatable {
    /// The Landlock ABI (1: files, Linux 5.13; 4: TCP, 6.7; 6: signal and
    /// abstract-socket scoping, 6.12), or nil without Landlock.
    public var landlockABI: Int?
    /// seccomp filters (`CONFIG_SECCOMP_FILTER`, every mainstream kernel).
    public var seccomp: Bool

    public init(landlockABI: Int?, seccomp: Bool) {
        self.landlockABI = landlockABI
        self.seccomp = seccomp
    }

    /// TCP rules (ABI 4).
    public var landlockNetwork: Bool { (landlockABI ?? 0) >= 4 }
    /// Signal and abstract Unix socket scoping (ABI 6).
    public var landlockScopes: Bool { (landlockABI ?? 0) >= 6 }

    /// This kernel's, as probed at first use.
    public static let current: KernelSupport = {
        let abi = tether_landlock_abi()
        return KernelSupport(landlockABI: abi > 0 ? Int(abi) : nil, seccomp: SeccompFilter.isAvailable)
    }()
}
