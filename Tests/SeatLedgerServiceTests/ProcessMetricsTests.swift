@testable import SeatLedgerService
import Testing

@Suite("process_* figures from /proc/[pid]/stat")
struct ProcessMetricsTests {
    @Test("fields are counted after the command name's last ')', which may hold spaces and parentheses")
    func parse() throws {
        // proc(5): pid (comm) state ppid … utime(14) stime(15) … starttime(22) vsize(23) rss(24) …
        let stat = "4242 (seat ledger) (x)) S 1 4242 4242 0 -1 4194560 900 0 0 0 250 50 0 0 20 0 9 0 1000 123456789 2048 "
            + "18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 17 1 0 0 0 0 0\n"
        let figures = try #require(ProcessMetrics.parse(stat: stat, bootTime: 1_700_000_000, clockTicks: 100, pageSize: 4096,
                                                        openFileDescriptors: 12, maxFileDescriptors: 65_536))
        #expect(figures.cpuSeconds == 3.0)
        #expect(figures.startTimeSeconds == 1_700_000_010)
        #expect(figures.virtualBytes == 123_456_789)
        #expect(figures.residentBytes == 2048 * 4096)
        #expect(figures.exposition.contains("\nprocess_open_fds 12\n"))
        #expect(figures.exposition.contains("# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 3.0\n"))
        #expect(ProcessMetrics.parse(stat: "4242 (short) S 1 2", bootTime: 0, clockTicks: 100, pageSize: 4096,
                                     openFileDescriptors: 0, maxFileDescriptors: 0) == nil, "a cut line is no figures")
    }

    @Test("this process's own figures are read")
    func current() throws {
        let figures = try #require(ProcessMetrics.current())
        #expect(figures.residentBytes > 0)
        #expect(figures.openFileDescriptors > 0)
    }
}
