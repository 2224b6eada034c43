import AppStoreModels
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Writing to stdout/stderr, TTY detection and the exit codes scripts rely on.
enum Terminal {
    /// Exit statuses, documented in `seatledger --help`.
    enum ExitCode: Int32 {
        /// Success; for `diff`, no difference.
        case success = 0
        /// A check found something: `verify` found a broken chain, `diff` found differences.
        case findings = 1
        /// Error: bad usage, unreadable input, no ledger, I/O or database failure.
        case failure = 2
        /// `ingest`/`record` finished but quarantined some inputs (nothing was lost).
        case quarantined = 3
        /// A file `ingest` was stopped by SIGINT/SIGTERM before it read all its input; committed
        /// batches are kept and a re-run skips them as duplicates.
        case interrupted = 4
    }

    static func out(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func err(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// Prints `value` as pretty JSON on stdout.
    static func json(_ value: JSONValue) {
        out(value.prettyString())
    }

    static var stderrIsTTY: Bool { isatty(STDERR_FILENO) == 1 }
    static var stdoutIsTTY: Bool { isatty(STDOUT_FILENO) == 1 }
}
