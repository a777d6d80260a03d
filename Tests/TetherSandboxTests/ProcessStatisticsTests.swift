#if canImport(Glibc)
import Glibc
#endif
import Testing
import TetherTestSupport
@testable import TetherSandbox

@Suite struct ProcessStatisticsTests {
    /// A command with spaces and parentheses does not shift the fields.
    @Test func statFieldsAreReadAfterTheCommand() throws {
        let line = "4242 (my (odd) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 1000 10000000 777 18446744073709551615"
        let statistics = try #require(ProcessStatistics.parse(stat: line))
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        #expect(statistics.cpuSeconds == 300 / ticks)
        #expect(statistics.residentBytes == 777 * Int64(sysconf(Int32(_SC_PAGESIZE))))
        #expect(ProcessStatistics.parse(stat: "4242 (cut") == nil)
        #expect(ProcessStatistics.parse(stat: "4242 (x) S 1 2") == nil)
    }

    /// A process's dispositions from its status: caught and ignored
    /// signals are not left to their default; a gone process has none.
    @Test func whichSignalsAProcessLeavesToTheirDefault() throws {
        let shell = try TestProcess("/bin/sh", ["-c", #"trap "" USR1; trap "exit 0" TERM; echo ready; read line; exit 0"#])
        defer { shell.stopAlways() }
        _ = try shell.expectLine("ready")
        let pid = shell.pid
        #expect(ProcessStatistics.defaults(pid: pid, signal: SIGUSR1) == false)
        #expect(ProcessStatistics.defaults(pid: pid, signal: SIGTERM) == false)
        #expect(ProcessStatistics.defaults(pid: pid, signal: SIGHUP) == true)
        #expect(ProcessStatistics.defaults(pid: pid, signal: 65) == nil)
        shell.closeStdin()
        #expect(try shell.waitForExit(timeout: 10) == 0)
        #expect(ProcessStatistics.defaults(pid: pid, signal: SIGHUP) == nil)
    }

    @Test func ownProcessIsMeasured() throws {
        let own = try #require(ProcessStatistics.of(pid: getpid()))
        #expect(own.residentBytes > 1_000_000)
        #expect((ProcessStatistics.openDescriptors() ?? 0) >= 3)
        #expect(ProcessStatistics.of(pid: -1) == nil)
    }
}
