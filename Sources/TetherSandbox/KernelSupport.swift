import CTetherSystem

/// Which confinement mechanisms this kernel offers, probed once per process.
package struct KernelSupport: Sendable, Equatable {
    /// The Landlock ABI (1: files, Linux 5.13; 4: TCP, 6.7; 6: signal and
    /// abstract-socket scoping, 6.12), or nil without Landlock.
    package var landlockABI: Int?
    /// seccomp filters (`CONFIG_SECCOMP_FILTER`, every mainstream kernel).
    package var seccomp: Bool

    package init(landlockABI: Int?, seccomp: Bool) {
        self.landlockABI = landlockABI
        self.seccomp = seccomp
    }

    /// TCP rules (ABI 4).
    package var landlockNetwork: Bool { (landlockABI ?? 0) >= 4 }
    /// Signal and abstract Unix socket scoping (ABI 6).
    package var landlockScopes: Bool { (landlockABI ?? 0) >= 6 }

    /// This kernel's, as probed at first use.
    package static let current: KernelSupport = {
        let abi = tether_landlock_abi()
        return KernelSupport(landlockABI: abi > 0 ? Int(abi) : nil, seccomp: SeccompFilter.isAvailable)
    }()
}
