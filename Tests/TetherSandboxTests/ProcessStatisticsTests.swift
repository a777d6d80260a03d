#if canImport(Glibc)
import Glibc
#endif
import Testing
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

    @Test func ownProcessIsMeasured() throws {
        let own = try #require(ProcessStatistics.of(pid: getpid()))
        #expect(own.residentBytes > 1_000_000)
        #expect((ProcessStatistics.openDescriptors() ?? 0) >= 3)
        #expect(ProcessStatistics.of(pid: -1) == nil)
    }
}
