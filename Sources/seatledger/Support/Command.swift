/// One `seatledger` subcommand.
protocol Command {
    /// The word after `seatledger`.
    static var name: String { get }
    /// One line for the command list.
    static var summary: String { get }
    /// The full `--help` text.
    static var help: String { get }
    /// Options that take a value.
    static var options: Set<String> { get }
    /// Options of ``options`` that may be given more than once (each other one at most once).
    static var repeatableOptions: Set<String> { get }
    /// Boolean flags.
    static var flags: Set<String> { get }
    /// How many positional arguments the command accepts, given the ones it was called with
    /// (e.g. `quarantine show ID` takes two, `quarantine list` one); `nil` accepts any number.
    ///
    /// `main` refuses more than this before `run` is called, so a stray argument (say a ledger
    /// path given without `--db`) is a usage error instead of being silently ignored.
    static func maxPositionals(_ positionals: [String]) -> Int?
    /// Runs the command; the return value is the process exit status.
    static func run(_ arguments: Arguments) throws -> Terminal.ExitCode
}

extension Command {
    /// Options take one value unless the command says otherwise.
    static var repeatableOptions: Set<String> { [] }

    /// Commands take no positional argument unless they say otherwise.
    static func maxPositionals(_ positionals: [String]) -> Int? { 0 }
}

/// Shared help fragments so every command documents `--db` and exit codes alike.
enum HelpText {
    static let db = "  --db PATH|URL    ledger file or postgresql:// URL (default: $SEATLEDGER_DB, else ./seatledger.sqlite)"
    static let json = "  --json           machine-readable output on stdout"
    static let exitCodes = """
    Exit status:
      0  success
      1  a check found a problem (verify: broken chain or stale projections; diff: differences)
      2  error (bad usage, unreadable input, no ledger, database failure)
      3  finished, but some inputs were quarantined (nothing was lost)
      4  interrupted (SIGINT/SIGTERM) before finishing: an ingest before reading all its input, a
         copy between batches, a backfill between pages; what was committed is kept: re-run to continue
    """
}
