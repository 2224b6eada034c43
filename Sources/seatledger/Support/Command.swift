/// One `seatledger` subcommand.
///
/// Everything the CLI says about a command (its help, "did you mean", shell completions,
/// `seatledger help --json`) is derived from these declarations and the `commands` list in
/// `main.swift`, so a command added there gets all of it.
protocol Command: Sendable {
    /// The word after `seatledger`.
    static var name: String { get }
    /// One line for the command list.
    static var summary: String { get }
    /// The hand-written part of `--help`: usage, description and options. ``CommandHelp`` adds
    /// the examples, the global options and the exit statuses this command returns.
    static var help: String { get }
    /// Options that take a value.
    static var options: Set<String> { get }
    /// Options of ``options`` that may be given more than once (each other one at most once).
    static var repeatableOptions: Set<String> { get }
    /// Boolean flags.
    static var flags: Set<String> { get }
    /// The words a first positional argument may be (`quarantine list|show|retry`); empty for a
    /// command without actions. Used for "did you mean" and completions.
    static var actions: [String] { get }
    /// The exit statuses this command can return, with what each means for it (`--help` lists
    /// exactly these).
    static var exitStatuses: [ExitStatus] { get }
    /// Example command lines for `--help` (each a complete, runnable line).
    static var examples: [String] { get }
    /// How many positional arguments the command accepts, given the ones it was called with
    /// (e.g. `quarantine show ID` takes two, `quarantine list` one); `nil` accepts any number.
    ///
    /// `main` refuses more than this before `run` is called, so a stray argument (say a ledger
    /// path given without `--db`) is a usage error instead of being silently ignored.
    static func maxPositionals(_ positionals: [String]) -> Int?
    /// Runs the command; the return value is the process exit status.
    static func run(_ arguments: Arguments) throws -> Terminal.ExitCode
}

/// One exit status a command returns and what it means for that command.
struct ExitStatus: Sendable {
    let code: Terminal.ExitCode
    let meaning: String

    init(_ code: Terminal.ExitCode, _ meaning: String) {
        self.code = code
        self.meaning = meaning
    }

    static let success = ExitStatus(.success, "success")
    static let error = ExitStatus(.failure, "error (bad usage, unreadable input, no ledger, database failure)")
    static let quarantined = ExitStatus(.quarantined, "finished, but some inputs were quarantined (nothing was lost)")
}

extension Command {
    /// Options take one value unless the command says otherwise.
    static var repeatableOptions: Set<String> { [] }

    /// Commands take no positional argument unless they say otherwise.
    static func maxPositionals(_ positionals: [String]) -> Int? { 0 }

    /// No actions unless the command says otherwise.
    static var actions: [String] { [] }

    /// Success or error unless the command says otherwise.
    static var exitStatuses: [ExitStatus] { [.success, .error] }

    /// No examples unless the command gives some.
    static var examples: [String] { [] }
}

/// Shared help fragments so every command documents `--db` alike.
enum HelpText {
    static let db = "  --db PATH|URL    ledger file or postgresql:// URL (default: $SEATLEDGER_DB, else ./seatledger.sqlite)"
    static let json = "  --json           machine-readable output on stdout"
    /// Empty: ``CommandHelp`` appends the exit statuses each command declares (``Command/exitStatuses``).
    /// Kept so a command whose help still ends with `\(HelpText.exitCodes)` compiles (and prints
    /// its own statuses, not a shared table).
    static let exitCodes = ""
}
