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
    /// The options the command takes (besides `--help` and `--quiet`, which every command
    /// takes): parsing, the option lists of help and completions are derived from these.
    static var options: [any DeclaredOption] { get }
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
    /// Runs the command; the return value is the process exit status. It runs where it is
    /// awaited (`main`, on the main thread): a command that never suspends is an ordinary
    /// synchronous `run`, and `serve` awaits its signals and shutdown.
    nonisolated(nonsending) static func run(_ arguments: Arguments) async throws -> Terminal.ExitCode
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
    /// Whether the command declares `option` (by name).
    static func declares(_ option: some DeclaredOption) -> Bool {
        options.contains { $0.name == option.name }
    }

    /// The command's declarations with the global flags, in the order they are listed.
    static var declarations: [OptionDeclaration] {
        (options + Arguments.globalFlags).map { $0.declaration }
    }

    /// Commands take no positional argument unless they say otherwise.
    static func maxPositionals(_ positionals: [String]) -> Int? { 0 }

    /// No actions unless the command says otherwise.
    static var actions: [String] { [] }

    /// Success or error unless the command says otherwise.
    static var exitStatuses: [ExitStatus] { [.success, .error] }

    /// No examples unless the command gives some.
    static var examples: [String] { [] }
}
