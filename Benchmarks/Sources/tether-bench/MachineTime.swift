import FoundationEssentials
import Glibc

/// The machine's CPU time, from `/proc/stat`'s first line: what a span of
/// work cost every CPU together, whatever ran it (the host, its children,
/// the kernel's threads), and steadier than the span's wall time on a
/// machine whose scheduling stalls now and then.
enum MachineTime {
    /// Seconds every CPU spent busy (not idle, not waiting for I/O, not
    /// stolen) since boot.
    static func busySeconds() -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
              let line = stat.split(separator: "\n").first else { return nil }
        // "cpu user nice system idle iowait irq softirq steal ...", in ticks;
        // steal is the hypervisor's running other guests, not this machine's work.
        let fields = line.split(separator: " ").dropFirst().prefix(7).compactMap { Double($0) }
        guard fields.count == 7 else { return nil }
        let busy = fields[0] + fields[1] + fields[2] + fields[5] + fields[6]
        return busy / Double(max(1, sysconf(Int32(_SC_CLK_TCK))))
    }
}
