import AppStoreModels
import Foundation
import Reports
import SeatLedger

/// `seatledger retract EVENT --reason TEXT`: withdraws a wrongly recorded event from every projection.
enum RetractCommand: Command {
    static let name = "retract"
    static let summary = "withdraw a wrongly recorded event from every projection (nothing is deleted)"
    static let reason = Option<String?>("reason", value: "TEXT", help: "why (required); recorded in the log")
    static let by = Option<String?>("by", value: "NAME", help: "who decided (default: $USER)")
    static let options: [any DeclaredOption] = LedgerLocation.options + [reason, by, Flag.json]
    static let examples = ["seatledger retract 42 --reason \"envelope recorded for the wrong group\" --db ledger.sqlite"]
    static let help = """
    Usage: seatledger retract EVENT --reason TEXT [--by NAME] [--db PATH] [--json]

    EVENT is a position or an event id (see `seatledger events`). Appends a retraction: a
    `decision` event in the log (who, why, which event and the SHA-256 of its bytes;
    hash-chained like every event). From then on the projections skip the retracted event:
    `group show`, `member show`, `groups` and `serve` answer as if it had never arrived, and
    `replay` lists it marked as retracted. Nothing is deleted: the event stays in the log, and
    `--known-at` before the retraction still shows what was believed then. An operator's decision
    cannot be retracted, nor an event twice.

    Options:
    \(OptionHelp.lines(options))
    """

    static func maxPositionals(_ positionals: [String]) -> Int? { 1 }

    static func run(_ arguments: Arguments) throws -> Terminal.ExitCode {
        guard let ref = arguments.positionals.first else {
            throw UsageError(message: "retract needs the EVENT to retract: a position or an event id")
        }
        guard let reason = try arguments[Self.reason], !reason.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw UsageError(message: "retract needs --reason TEXT (recorded in the log)")
        }
        let actor = try arguments[by] ?? ProcessInfo.processInfo.environment["USER"] ?? "uid \(getuid())"
        let ledger = try LedgerLocation(arguments).open()
        guard try ledger.event(named: ref) != nil else {
            throw InputError(message: "no event `\(DisplayText.visible(ref))` in \(ledger.location) (give a position or an event id; see `seatledger events`)")
        }
        let receipt = try ledger.retract(ref, reason: reason, by: actor)
        if arguments[Flag.json] {
            Terminal.json([
                "retracted": ["position": .int(receipt.retractedPosition), "eventId": .string(receipt.retractedEventId)],
                "retraction": ["position": .int(receipt.position), "eventId": .string(receipt.eventId)],
                "groups": .array(receipt.groupKeys.map(JSONValue.string)), "by": .string(actor),
            ])
        } else {
            let groups = receipt.groupKeys.isEmpty ? "no group" : receipt.groupKeys.map { DisplayText.visible($0) }.joined(separator: ", ")
            Terminal.out("#\(receipt.retractedPosition) retracted; the retraction is event #\(receipt.position) (by \(DisplayText.visible(actor))); groups: \(groups)")
        }
        return .success
    }
}
