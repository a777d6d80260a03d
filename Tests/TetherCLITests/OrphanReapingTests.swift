import Foundation
import Testing
import TetherTestSupport

/// What an extension's background children leave when they end, in a
/// launch without a world of its own (no PID namespace whose first process
/// would inherit them): the host, a child subreaper, inherits them and
/// reaps each as it ends, not when its extension ends.
@Suite(.timed) struct OrphanReapingTests {
    /// The host's children that have ended and wait to be reaped (state Z).
    static func zombies(of host: Int32) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { pid in
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return false }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && fields[0] == "Z" && Int32(fields[1]) == host
        }
    }

    @Test func orphansOfAnExtensionWithoutAWorldAreReapedAsTheyEnd() throws {
        let fixture = try HostFixture()
        try fixture.addExtension("spawner", script: """
            \(HostFixture.shellHello("spawner"))
            for i in $(seq 30); do (true &); done
            echo spawned
            exec sleep 300
            """)
        try fixture.withHost(without: [.namespaces]) { host in
            _ = try host.expectLineStarting("[spawner] spawned", timeout: 20)
            // Each status is a turn of the host's loop; the orphans end on their own meanwhile.
            var left = Self.zombies(of: host.pid)
            for _ in 0..<50 where !left.isEmpty {
                _ = try fixture.group.run(["status"])
                left = Self.zombies(of: host.pid)
            }
            #expect(left.isEmpty, "\(left.count) zombies of the host")
        }
    }
}
