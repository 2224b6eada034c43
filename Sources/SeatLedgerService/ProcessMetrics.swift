import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The `process_*` series every Prometheus client library exports, read from `/proc/self` when
/// `/metrics` is scraped: CPU time, memory, start time and file descriptors.
struct ProcessMetrics: Equatable {
    /// User and system CPU time, seconds (`process_cpu_seconds_total`).
    var cpuSeconds: Double
    /// Resident memory, bytes (`process_resident_memory_bytes`).
    var residentBytes: Int64
    /// Virtual memory, bytes (`process_virtual_memory_bytes`).
    var virtualBytes: Int64
    /// When the process started, seconds since the epoch (`process_start_time_seconds`).
    var startTimeSeconds: Double
    /// Open file descriptors (`process_open_fds`).
    var openFileDescriptors: Int
    /// The soft limit on file descriptors (`process_max_fds`).
    var maxFileDescriptors: Int64

    /// This process's figures; `nil` where `/proc` cannot be read (not Linux, or hidden).
    static func current() -> ProcessMetrics? {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
              let systemStat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8) else { return nil }
        let bootTime = systemStat.split(separator: "\n").first { $0.hasPrefix("btime ") }
            .flatMap { Double($0.dropFirst("btime ".count).trimmingCharacters(in: .whitespaces)) }
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count).map { $0 - 1 }  // less the listing's own
        var limit = rlimit()
        let maxDescriptors: Int64? = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 ? Int64(clamping: limit.rlim_cur) : nil
        guard let bootTime, let descriptors, let maxDescriptors else { return nil }
        return parse(stat: stat, bootTime: bootTime, clockTicks: Double(sysconf(Int32(_SC_CLK_TCK))),
                     pageSize: Int64(sysconf(Int32(_SC_PAGESIZE))), openFileDescriptors: descriptors, maxFileDescriptors: maxDescriptors)
    }

    /// The figures in a `/proc/[pid]/stat` line (proc(5): utime, stime, starttime, vsize, rss are
    /// fields 14, 15, 22, 23, 24; the command name in field 2 may hold spaces and parentheses, so
    /// fields are counted after its last `)`).
    static func parse(stat: String, bootTime: Double, clockTicks: Double, pageSize: Int64,
                      openFileDescriptors: Int, maxFileDescriptors: Int64) -> ProcessMetrics? {
        guard let close = stat.lastIndex(of: ")"), clockTicks > 0 else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
        // fields[0] is field 3 (state): field N is fields[N - 3].
        func number(_ field: Int) -> Double? { fields.count > field - 3 ? Double(fields[field - 3]) : nil }
        guard let user = number(14), let system = number(15), let start = number(22), let virtual = number(23), let resident = number(24) else {
            return nil
        }
        return ProcessMetrics(cpuSeconds: (user + system) / clockTicks, residentBytes: Int64(resident) * pageSize,
                              virtualBytes: Int64(virtual), startTimeSeconds: bootTime + start / clockTicks,
                              openFileDescriptors: openFileDescriptors, maxFileDescriptors: maxFileDescriptors)
    }

    /// The series in the text exposition format.
    var exposition: String {
        func series(_ name: String, _ type: String, _ help: String, _ value: String) -> String {
            "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n\(name) \(value)\n"
        }
        return series("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.", String(cpuSeconds))
            + series("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", String(residentBytes))
            + series("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", String(virtualBytes))
            + series("process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.", String(startTimeSeconds))
            + series("process_open_fds", "gauge", "Number of open file descriptors.", String(openFileDescriptors))
            + series("process_max_fds", "gauge", "Maximum number of open file descriptors.", String(maxFileDescriptors))
    }
}
