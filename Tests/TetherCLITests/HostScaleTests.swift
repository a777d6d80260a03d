import Foundation
import Testing
import TetherTestSupport
import TetherIPC

/// Many extensions under one host with default flags (issue 43), at the
/// size CI affords: `tether bench scale` measures a thousand.
@Suite(.timed) struct HostScaleTests {
    static let count = 200

    /// Every launch of 200 on-demand widgets, asked at once, attaches; no
    /// launched widget opens an inotify instance of its own (the host
    /// relays store changes), so more widgets run than the user's 128
    /// instances allow; status and metrics answer; a stop leaves nothing.
    @Test func twoHundredWidgetsUnderDefaultFlags() throws {
        let fixture = try HostFixture()
        let widget = exampleExecutable("example-widget")
        for index in 0..<Self.count {
            try writeFile("\(fixture.extensions)/w\(index).extension.json", #"""
                {"name":"w\#(index)","role":"widget","executable":"\#(widget)","arguments":["--entries","1","--policy","never"],"activation":"on-demand","idleTimeout":3600}
                """#)
        }
        let host = try fixture.startHost()
        defer { host.signal(SIGKILL) }
        let clients = try (0..<8).map { _ in try fixture.rawClient() }
        defer { clients.forEach { $0.close() } }
        for index in 0..<Self.count {
            clients[index % clients.count].send(HostConnectionsTests.request(index, HostMethod.extensionStart, #"{"name":"w\#(index)"}"#))
        }
        var failures: [String] = []
        for (slot, client) in clients.enumerated() {
            for _ in stride(from: slot, to: Self.count, by: clients.count) {
                guard let answer = client.readLine(timeout: 120_000) else {
                    failures.append("no answer")
                    break
                }
                if answer.contains(#""error""#) { failures.append(answer) }
            }
        }
        #expect(failures.isEmpty, "\(failures.prefix(3))")

        let status = try fixture.status()
        let extensions = try #require(status["extensions"] as? [[String: Any]])
        let pids = extensions.compactMap { ($0["pid"] as? Int).flatMap { Int32(exactly: $0) } }
        #expect(extensions.count == Self.count && pids.count == Self.count, "\(extensions.count) listed, \(pids.count) running")
        #expect(extensions.allSatisfy { $0["attached"] as? Bool == true })
        let metrics = try fixture.group.run(["metrics"])
        #expect(metrics.status == 0, "\(metrics.stderr)")
        let watching = pids.filter { pid in
            let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
            return fds.contains { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)")) == "anon_inode:inotify" }
        }
        #expect(watching.isEmpty, "launched widgets with an inotify instance of their own: \(watching.count)")

        host.signal(SIGTERM)
        #expect(try host.waitForExit(timeout: 60) == 0)
        try waitUntilGone(pids, within: 10)
    }
}
