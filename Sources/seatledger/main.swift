import EventStore
import Foundation
import SeatLedger

/// Every subcommand, in the order `seatledger --help` lists them.
let commands: [any Command.Type] = [
    InitCommand.self, ConfigCommand.self, IngestCommand.self, RecordCommand.self, VerifyCommand.self,
    QuarantineCommand.self, EventsCommand.self, CheckCommand.self, GroupsCommand.self, GroupCommand.self,
    MemberCommand.self, RebuildCommand.self, ReplayCommand.self, DiffCommand.self, AuditCommand.self, EnqueueCommand.self,
    DemoCommand.self, BackfillCommand.self, ReconcileCommand.self, SeatsCommand.self, APIConfigCommand.self,
    CopyCommand.self, ServeCommand.self, TokenCommand.self,
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
    `seatledger --version` for this build's version.

    \(HelpText.exitCodes)
    """
}

/// What `seatledger --version` prints: this build's version and the versions of what it writes.
let versionText = """
    seatledger \(SeatLedgerVersion.release)
    ledger schema \(SeatLedgerVersion.ledgerSchema), decoder \(SeatLedgerVersion.decoder), projection rules \(ProjectionRules.version)
    """

@MainActor func main() -> Int32 {
    var argv = Array(CommandLine.arguments.dropFirst())
    guard let first = argv.first else {
        // No command is a usage error: scripts must not mistake it for work done.
        Terminal.err("seatledger: missing command\n\n\(globalHelp())")
        return Terminal.ExitCode.failure.rawValue
    }
    argv.removeFirst()
    switch first {
    case "--help", "-h":
        Terminal.out(globalHelp())
        return Terminal.ExitCode.success.rawValue
    case "help":
        // `seatledger help COMMAND` is `seatledger COMMAND --help`.
        guard let topic = argv.first else {
            Terminal.out(globalHelp())
            return Terminal.ExitCode.success.rawValue
        }
        guard argv.count == 1, let command = commands.first(where: { $0.name == topic }) else {
            Terminal.err("seatledger help: \(argv.count == 1 ? "unknown command '\(topic)'" : "give one command")\n\n\(globalHelp())")
            return Terminal.ExitCode.failure.rawValue
        }
        Terminal.out(command.help)
        return Terminal.ExitCode.success.rawValue
    case "--version", "version":
        guard argv.isEmpty else {
            Terminal.err("seatledger \(first): unexpected argument \(argv[0])")
            return Terminal.ExitCode.failure.rawValue
        }
        Terminal.out(versionText)
        return Terminal.ExitCode.success.rawValue
    default:
        break
    }
    guard let command = commands.first(where: { $0.name == first }) else {
        Terminal.err("seatledger: unknown command '\(first)'\n\n\(globalHelp())")
        return Terminal.ExitCode.failure.rawValue
    }
    do {
        let arguments = try Arguments(argv, options: command.options, repeatable: command.repeatableOptions, flags: command.flags)
        if arguments.flag("help") {
            Terminal.out(command.help)
            return Terminal.ExitCode.success.rawValue
        }
        try arguments.checkPositionals(limit: command.maxPositionals(arguments.positionals))
        return try command.run(arguments).rawValue
    } catch let error as InputError {
        Terminal.err("seatledger \(command.name): \(error.message)")
        return Terminal.ExitCode.failure.rawValue
    } catch let error as UsageError {
        Terminal.err("seatledger \(command.name): \(error.message)\nRun `seatledger \(command.name) --help` for usage.")
        return Terminal.ExitCode.failure.rawValue
    } catch {
        // Foundation file errors get a short reason, not an NSError dump.
        let domain = (error as NSError).domain
        let text = domain == NSCocoaErrorDomain || domain == NSPOSIXErrorDomain ? FileChecks.describe(error) : "\(error)"
        Terminal.err("seatledger \(command.name): error: \(text)")
        return Terminal.ExitCode.failure.rawValue
    }
}

exit(main())
