import AppStoreModels
import Foundation
import LedgerStorage
import PostgresStore
import SeatLedger

/// Every subcommand, in the order `seatledger --help` lists them. Help, "did you mean",
/// completions and `help --json` are all derived from this list and each command's declarations.
let commands: [any Command.Type] = [
    InitCommand.self, ConfigCommand.self, IngestCommand.self, RecordCommand.self, VerifyCommand.self,
    QuarantineCommand.self, EventsCommand.self, CheckCommand.self, GroupsCommand.self, GroupCommand.self,
    MemberCommand.self, EntitlementsCommand.self, RebuildCommand.self, ReplayCommand.self, DiffCommand.self, AuditCommand.self, EnqueueCommand.self,
    DemoCommand.self, BackfillCommand.self, ReconcileCommand.self, SeatsCommand.self, APIConfigCommand.self,
    CopyCommand.self, ServeCommand.self, TokenCommand.self, WebhookCommand.self, AccessChangesCommand.self, RetractCommand.self,
    CompletionsCommand.self,
]

/// The exit statuses `seatledger` as a whole can return (each command's help lists its own).
let allExitStatuses: [ExitStatus] = [
    .success,
    ExitStatus(.findings, "a check found something (verify, check, copy, diff, reconcile: see the command's help)"),
    .error, .quarantined,
    ExitStatus(.interrupted, "interrupted (SIGINT/SIGTERM) before finishing; what was committed is kept: re-run to continue"),
]

@MainActor func globalHelp() -> String {
    let width = commands.map { $0.name.count }.max() ?? 10
    let list = commands.map { "  \($0.name.padding(toLength: width + 2, withPad: " ", startingAt: 0))\($0.summary)" }
        .joined(separator: "\n")
    return """
    seatledger — an event-sourced ledger for App Store multiseat (group) subscriptions.

    Usage: seatledger COMMAND [options]

    Commands:
    \(list)

    Run `seatledger COMMAND --help` (or `seatledger help COMMAND`) for a command's options,
    examples and exit statuses; `seatledger --version` for this build's version;
    `seatledger completions bash|zsh|fish` for shell completions; `seatledger help --man` for the
    manual page (roff).

    Every command takes --help and --quiet; --db defaults to $SEATLEDGER_DB, else ./seatledger.sqlite.
    Colour only on a terminal, never with NO_COLOR set or TERM=dumb.

    \(CommandHelp.exitStatusText(allExitStatuses))
    """
}

/// What `seatledger --version` prints: this build's version and commit, and the versions of what it writes.
let versionText = """
    seatledger \(SeatLedgerVersion.release) (commit \(BuildCommit.value))
    ledger schema \(SeatLedgerVersion.ledgerSchema), decoder \(SeatLedgerVersion.decoder), projection rules \(ProjectionRules.version)
    """

/// `seatledger --version --json`: the same as one object, for scripts (the Debian package's build reads it).
let versionJSON: JSONValue = .object([
    "version": .string(SeatLedgerVersion.release), "commit": .string(BuildCommit.value),
    "ledgerSchema": .int(SeatLedgerVersion.ledgerSchema), "decoder": .int(SeatLedgerVersion.decoder),
    "projectionRules": .int(Int64(ProjectionRules.version)),
])

/// Reports an error: one line on stderr, or under `--json` one object on stdout,
/// `{"error": {"code": C, "message": M, "exitCode": 2}}`; returns the exit status (2).
/// A URL the message echoes (an argument given twice, an unexpected one, an unreadable input)
/// is printed without its credentials (``EchoedURLs``).
@MainActor func reportError(_ message: String, code: String, command: String?, json: Bool, hint: String? = nil) -> Int32 {
    let status = Terminal.ExitCode.failure.rawValue
    let message = EchoedURLs.redacted(message)
    if json {
        Terminal.json(["error": ["code": .string(code), "message": .string(message), "exitCode": .int(Int64(status))]])
    } else {
        Terminal.err("seatledger\(command.map { " \($0)" } ?? ""): \(message)" + (hint.map { "\n\(EchoedURLs.redacted($0))" } ?? ""))
    }
    return status
}

/// The "unknown command" error, naming the closest command.
@MainActor func unknownCommand(_ word: String, json: Bool, in context: String? = nil) -> Int32 {
    reportError("unknown command '\(word)'\(Suggestion.note(for: word, among: commands.map { $0.name } + (context == nil ? ["help"] : [])))",
                code: "unknown_command", command: context, json: json, hint: "Run `seatledger --help` for the list of commands.")
}

/// Runs the command line: the exit status. Awaited by the top-level code, on the main actor.
@MainActor func main() async -> Int32 {
    PostgresLedgerEngine.register()   // --db takes postgresql:// URLs
    var argv = Array(CommandLine.arguments.dropFirst())
    // Before parsing (a usage error must honour them too): --json asks for JSON errors, --quiet for silence.
    let beforeSeparator = argv.prefix { $0 != "--" }
    let json = beforeSeparator.contains("--json")
    if beforeSeparator.contains("--quiet") || beforeSeparator.contains("-q") { Terminal.quiet.store(true, ordering: .relaxed) }
    guard let first = argv.first else {
        // No command is a usage error: scripts must not mistake it for work done.
        return reportError("missing command", code: "usage", command: nil, json: json,
                           hint: "Run `seatledger --help` for the list of commands.")
    }
    argv.removeFirst()
    switch first {
    case "--help", "-h":
        Terminal.out(globalHelp())
        return Terminal.ExitCode.success.rawValue
    case "help":
        // `seatledger help COMMAND` is `seatledger COMMAND --help`; `help --json` is every command's declarations;
        // `help --man` the manual page made from them.
        // `help --help` (or -h) is help about help: the global help, as with no topic.
        if argv == ["--man"] {
            Terminal.out(ManPage.render(commands: commands, globalHelp: globalHelp(), version: SeatLedgerVersion.release), terminator: "")
            return Terminal.ExitCode.success.rawValue
        }
        let topics = argv.filter { $0 != "--json" && $0 != "--help" && $0 != "-h" }
        if json, topics.isEmpty {
            Terminal.json(CommandHelp.json(commands))
            return Terminal.ExitCode.success.rawValue
        }
        guard let topic = topics.first else {
            Terminal.out(globalHelp())
            return Terminal.ExitCode.success.rawValue
        }
        guard topics.count == 1 else { return reportError("help: give one command", code: "usage", command: nil, json: json) }
        guard let command = commands.first(where: { $0.name == topic }) else { return unknownCommand(topic, json: json, in: "help") }
        Terminal.out(CommandHelp.text(command))
        return Terminal.ExitCode.success.rawValue
    case "--version", "version":
        guard let extra = argv.first(where: { $0 != "--json" }) else {
            if json { Terminal.json(versionJSON) } else { Terminal.out(versionText) }
            return Terminal.ExitCode.success.rawValue
        }
        return reportError("unexpected argument \(extra)", code: "usage", command: first, json: json)
    default:
        break
    }
    guard let command = commands.first(where: { $0.name == first }) else { return unknownCommand(first, json: json) }
    let jsonErrors = json && command.declares(Flag.json)
    do {
        let arguments = try Arguments(argv, declaring: command.options)
        if arguments[Flag.help] {
            Terminal.out(CommandHelp.text(command))
            return Terminal.ExitCode.success.rawValue
        }
        if !command.actions.isEmpty, let action = arguments.positionals.first, !command.actions.contains(action),
           !Arguments.looksLikeLedger(action) {
            // An action word that is not one is a typo more often than an argument: name the closest.
            if let suggestion = Suggestion.closest(to: action, among: command.actions) {
                throw UsageError(message: "unknown action '\(action)'; did you mean `\(command.name) \(suggestion)`?")
            }
        }
        try arguments.checkPositionals(limit: command.maxPositionals(arguments.positionals))
        return try await command.run(arguments).rawValue
    } catch let error as InputError {
        return reportError(error.message, code: "input", command: command.name, json: jsonErrors)
    } catch let error as UsageError {
        return reportError(error.message, code: "usage", command: command.name, json: jsonErrors,
                           hint: "Run `seatledger \(command.name) --help` for usage.")
    } catch {
        // Foundation file errors get a short reason, not an NSError dump.
        let domain = (error as NSError).domain
        let text = domain == NSCocoaErrorDomain || domain == NSPOSIXErrorDomain ? FileChecks.describe(error) : "\(error)"
        return reportError(jsonErrors ? text : "error: \(text)", code: errorCode(of: error), command: command.name, json: jsonErrors)
    }
}

/// The `--json` error code of an error that is not a usage or input error: `no_ledger` and
/// `not_found` (no group or member matches) for what a script most often checks for, else `error`.
func errorCode(of error: any Error) -> String {
    switch error {
    case is LedgerNotFound: return "no_ledger"
    case LedgerStoreError.missing: return "no_ledger"
    case is GroupNotFound, is NoMemberAtMoment, is PersonNotFound: return "not_found"
    default: return "error"
    }
}

exit(await main())
