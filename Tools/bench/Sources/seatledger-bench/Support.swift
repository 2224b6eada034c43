import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A usage or setup problem: printed on stderr, exit status 2.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ message: String) { description = message }
}

/// `--name value` options and `--flag`s after the subcommand.
struct Options {
    private var values: [String: String] = [:]
    private var flags: Set<String> = []

    init(_ arguments: [String], valued: Set<String>, boolean: Set<String> = []) throws {
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            var name = argument, inline: String?
            if let eq = argument.firstIndex(of: "=") {
                name = String(argument[..<eq])
                inline = String(argument[argument.index(after: eq)...])
            }
            if valued.contains(name) {
                guard let value = inline ?? rest.popFirst() else { throw BenchError("\(name) needs a value") }
                values[name] = value
            } else if boolean.contains(name), inline == nil {
                flags.insert(name)
            } else {
                throw BenchError("unknown option \(argument)")
            }
        }
    }

    func string(_ name: String) throws -> String {
        guard let value = values[name] else { throw BenchError("\(name) is required") }
        return value
    }

    func string(_ name: String, default fallback: String) -> String { values[name] ?? fallback }
    func optional(_ name: String) -> String? { values[name] }

    func int(_ name: String, default fallback: Int) throws -> Int {
        guard let text = values[name] else { return fallback }
        guard let value = Int(text) else { throw BenchError("\(name) must be an integer, got \(text)") }
        return value
    }

    func double(_ name: String, default fallback: Double) throws -> Double {
        guard let text = values[name] else { return fallback }
        guard let value = Double(text) else { throw BenchError("\(name) must be a number, got \(text)") }
        return value
    }

    func flag(_ name: String) -> Bool { flags.contains(name) }
}

/// Monotonic seconds.
func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Peak resident set size of this process so far, in MiB (getrusage ru_maxrss is in KiB on Linux).
func peakRSSMiB() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_maxrss) / 1024
}

/// Prints one JSON object (sorted keys) on stdout.
func emit(_ object: [String: Any]) throws {
    let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    FileHandle.standardOutput.write(data + Data("\n".utf8))
}

func log(_ text: String) { FileHandle.standardError.write(Data(("  " + text + "\n").utf8)) }

/// Rounds for reporting.
func round(_ value: Double, _ digits: Int) -> Double {
    let scale = pow(10, Double(digits))
    return (value * scale).rounded() / scale
}

/// Percentile by nearest rank (p in 0...100) of unsorted samples.
func percentile(_ samples: [Double], _ p: Double) -> Double {
    guard !samples.isEmpty else { return .nan }
    let sorted = samples.sorted()
    let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
    return sorted[min(max(rank, 1), sorted.count) - 1]
}

func median(_ samples: [Double]) -> Double {
    guard !samples.isEmpty else { return .nan }
    let sorted = samples.sorted()
    let mid = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/// Reads a file line by line with getline(3) (lines without the newline; empty lines skipped).
final class LineFile {
    private let file: UnsafeMutablePointer<FILE>
    private var buffer: UnsafeMutablePointer<CChar>?
    private var capacity = 0

    init(path: String) throws {
        guard let file = fopen(path, "r") else { throw BenchError("cannot read \(path): \(String(cString: strerror(errno)))") }
        self.file = file
    }

    deinit {
        free(buffer)
        fclose(file)
    }

    /// The next non-empty line's bytes, or nil at the end of the file.
    func next() -> Data? {
        while true {
            let length = getline(&buffer, &capacity, file)
            guard length >= 0, let buffer else { return nil }
            var count = length
            while count > 0, buffer[count - 1] == 10 || buffer[count - 1] == 13 { count -= 1 }
            if count == 0 { continue }
            return Data(bytes: buffer, count: count)
        }
    }
}
