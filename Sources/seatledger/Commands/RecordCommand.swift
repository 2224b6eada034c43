import Foundation
import LedgerEvents
import LedgerIntake
import SeatLedger

/// `seatledger record`: append one `apiResponse` envelope from a file or stdin.
enum RecordCommand: Command {
    static let name = "record"
    static let summary = "append one App Store Server API response envelope from a file or stdin"
    static let options: [any DeclaredOption] = LedgerLocation.options + [Flag.json]
    static let exitStatuses: [ExitStatus] = [.success, .error, ExitStatus(.quarantined, "the envelope was refused and quarantined (kept with its raw bytes)")]
    static let examples = ["seatledger record --db ledger.sqlite get-seat-info.json"]
    static let help = """
    Usage: seatledger record [FILE|-] [--db PATH] [--json]

    Appends one `{"apiResponse": {…}}` envelope (see Events/api/README.md): endpoint, method,
    path, requestBody, status, body, respondedAt, environment, context. Signed data in the body
    (signedTransactions, signedTransactionInfo, signedRenewalInfo, notification history) is
    verified; notification-history items are also appended as notifications. The same envelope
    twice appends once. A refused envelope is quarantined (exit 3).

    Options:
    \(OptionHelp.lines(options))
    """

    static func maxPositionals(_ positionals: [String]) -> Int? { 1 }

    static func run(_ arguments: Arguments) throws -> Terminal.ExitCode {
        guard arguments.positionals.count <= 1 else { throw UsageError(message: "record takes one FILE (or - for stdin)") }
        let input = arguments.positionals.first ?? "-"
        let data: Data
        if input == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            data = try FileChecks.read(input)
        }
        let ledger = try LedgerLocation(arguments).open()
        let outcome = try ledger.ingestBatch([InboundMessage(raw: data, source: input == "-" ? "stdin" : input, origin: .recorded)]).1[0]
        let json = arguments[Flag.json]
        switch outcome {
        case .appended(let positions, let duplicates):
            if json {
                Terminal.json(["result": "appended", "positions": .array(positions.map { .int($0) }), "carriedDuplicates": .count(duplicates)])
            } else {
                Terminal.out("Appended at position \(positions.map(String.init).joined(separator: ", "))" +
                             (duplicates > 0 ? " (\(duplicates) carried items already present)" : ""))
            }
            return .success
        case .duplicate(let position):
            if json { Terminal.json(["result": "duplicate", "existingPosition": .int(position)]) } else {
                Terminal.out("Already recorded at position \(position); nothing appended.")
            }
            return .success
        case .quarantined(let id, let rejection):
            if json { Terminal.json(["result": "quarantined", "quarantineId": .int(id), "errorCode": .string(rejection.code.rawValue), "reason": .string(rejection.reason)]) } else {
                Terminal.err("Refused and quarantined as #\(id): \(rejection.reason)")
            }
            return .quarantined
        }
    }
}
