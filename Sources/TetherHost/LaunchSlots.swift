/// How many extensions may run (or be launching) at once under the host's
/// descriptor limit (`DescriptorLimit.budget`): a launch takes a slot before
/// it spawns and gives it back when it ends. Loop-confined.
final class LaunchSlots {
    /// Extensions that may hold descriptors at once.
    let capacity: Int
    /// The soft descriptor limit it was counted under, for what is said.
    let softLimit: Int
    private(set) var inUse = 0

    init(capacity: Int, softLimit: Int) {
        self.capacity = capacity
        self.softLimit = softLimit
    }

    var isFull: Bool { inUse >= capacity }

    /// A slot, or false when all are taken.
    func take() -> Bool {
        guard !isFull else { return false }
        inUse += 1
        return true
    }

    func give() { inUse = max(0, inUse - 1) }

    /// Why a launch must wait: the fix included.
    var refusal: String {
        "\(inUse) extension(s) run, the most the host's descriptor limit (\(softLimit)) leaves room for; "
            + "stop one, or raise the limit (LimitNOFILE= in its unit, ulimit -n)"
    }
}
