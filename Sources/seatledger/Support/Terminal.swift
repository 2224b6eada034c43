import AppStoreModels
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Writing to stdout/stderr, terminal detection (colour, width, in-place progress) and the exit
/// codes scripts rely on.
enum Terminal {
    /// Exit statuses; each command's `--help` lists the ones it returns.
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

    /// `--quiet`: no progress, notes, hints or warnings on stderr (errors are still printed).
    static let quiet = Atomic<Bool>(false)
    /// Set once SIGINT/SIGTERM asked a long command to stop: progress lines stop at once.
    static let stopping = Atomic<Bool>(false)
    /// Whether the last thing written to stderr is an unfinished in-place progress line.
    static let progressLineOpen = Atomic<Bool>(false)

    static var isQuiet: Bool { quiet.load(ordering: .relaxed) }

    static func out(_ text: String, terminator: String = "\n") {
        FileHandle.standardOutput.write(Data((text + terminator).utf8))
    }

    static func err(_ text: String) {
        endProgressLine()
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// A note, hint or warning on stderr; nothing under `--quiet`.
    static func note(_ text: String) {
        guard !isQuiet else { return }
        err(text)
    }

    /// Writes a progress line: redrawn in place on a capable terminal, else one line each.
    static func progress(_ text: String) {
        guard !isQuiet else { return }
        if stderrRedraws {
            FileHandle.standardError.write(Data("\r\u{1B}[K\(text)".utf8))
            progressLineOpen.store(true, ordering: .relaxed)
        } else {
            FileHandle.standardError.write(Data((text + "\n").utf8))
        }
    }

    /// Ends an in-place progress line (a newline), so what follows starts on a line of its own.
    static func endProgressLine() {
        if progressLineOpen.exchange(false, ordering: .relaxed) {
            FileHandle.standardError.write(Data("\n".utf8))
        }
    }

    /// Prints `value` as pretty JSON on stdout.
    static func json(_ value: JSONValue) {
        out(value.prettyString())
    }

    static var stderrIsTTY: Bool { isatty(STDERR_FILENO) == 1 }
    static var stdoutIsTTY: Bool { isatty(STDOUT_FILENO) == 1 }

    /// `TERM=dumb`: a terminal without cursor control or colour.
    static var isDumbTerminal: Bool { ProcessInfo.processInfo.environment["TERM"] == "dumb" }

    /// Whether stderr can redraw a line in place (a terminal that is not `TERM=dumb`).
    static var stderrRedraws: Bool { stderrIsTTY && !isDumbTerminal }

    /// Whether stdout gets colour: a terminal, not `TERM=dumb`, and no `NO_COLOR` (no-color.org:
    /// set and not empty).
    static var colorOnStdout: Bool {
        let noColor = ProcessInfo.processInfo.environment["NO_COLOR"].map { !$0.isEmpty } ?? false
        return stdoutIsTTY && !isDumbTerminal && !noColor
    }

    /// The width tables must fit: `$COLUMNS` when set, else the terminal's width when stdout is
    /// one, else `nil` (a pipe or file gets whole lines).
    static var width: Int? {
        if let text = ProcessInfo.processInfo.environment["COLUMNS"], let columns = Int(text), columns > 0 { return columns }
        guard stdoutIsTTY else { return nil }
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }
}
