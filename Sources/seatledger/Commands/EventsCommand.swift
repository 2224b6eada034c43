import AppStoreModels
import Foundation
import JWSVerification
import LedgerEvents
import LedgerStorage
import Reports
import SeatLedger

/// `seatledger events`: list stored events, all or those mentioning an identifier.
enum EventsCommand: Command {
    static let name = "events"
    static let summary = "list stored events (all, or those mentioning an identifier), or show one"
    static let mentioning = Option<String?>("mentioning", value: "ID", help: "only events that mention ID or affected what it names")
    static let limit = Option<Int?>("limit", value: "N", help: "at most N events (default: all)", parse: .positiveInteger)
    static let options: [any DeclaredOption] = LedgerLocation.options + [mentioning, limit, Flag.json]
    static let actions = ["show"]
    static let examples = ["seatledger events --db ledger.sqlite --mentioning 2000000000000001", "seatledger events show 1 --db ledger.sqlite"]
    static let help = """
    Usage: seatledger events [--mentioning ID] [--limit N] [--db PATH] [--json]
           seatledger events show POSITION|EVENT_ID [--db PATH] [--json]   (--json adds the raw bytes)

    Lists events in log order: position, occurred-at (Apple's signed time), recorded-at (ours), kind,
    type/subtype or endpoint/status, and event id. --mentioning finds every event naming an identifier
    (notificationUUID, originalTransactionId, transactionId, appTransactionId, seatClaimId, groupId,
    memberRef, requestIdentifier, customerId) and every event that affected what it names: all of a
    group's events for a group, and for a member its seat claims' events (an UNCLAIM_SEATS names only
    claim ids), its evidence, and the event that revoked its access and the one that caused it (a seat
    REFUND). `show` prints one event with its identifiers, verification record and decoded payload
    (nested signed data decoded).

    Options:
    \(OptionHelp.lines(options))
    """

    static func maxPositionals(_ positionals: [String]) -> Int? { positionals.first == "show" ? 2 : 0 }

    static func run(_ arguments: Arguments) throws -> Terminal.ExitCode {
        let store = try LedgerLocation(arguments).openStore(readOnly: true)
        if arguments.positionals.first == "show" {
            guard arguments.positionals.count == 2 else { throw UsageError(message: "show needs a POSITION or EVENT_ID") }
            let key = arguments.positionals[1]
            let found = try Int64(key).flatMap { try store.event(at: $0) } ?? store.event(id: key)
            guard let event = found else { throw InputError(message: "no event \(key)") }
            let identifiers = try store.identifiers(at: event.position)
            var json = summary(event).objectValue ?? [:]
            json["identifiers"] = .array(identifiers.map { ["kind": .string($0.kind.rawValue), "value": .string($0.value)] })
            json["verification"] = .array(event.verification.map(\.json))
            json["decoded"] = event.decoded
            json["raw"] = .string(String(decoding: event.raw, as: UTF8.self))
            json["hash"] = .string(SHA256Digest.lowercaseHex(event.hash))
            if arguments[Flag.json] {
                Terminal.json(.object(json))
            } else {
                Terminal.out(text(event, identifiers: identifiers))
            }
            return .success
        }
        guard arguments.positionals.isEmpty else { throw UsageError(message: "unexpected argument \(arguments.positionals[0])") }
        let limit = try arguments[Self.limit] ?? Int.max
        var events: [LedgerEvent] = []
        if let id = try arguments[Self.mentioning] {
            events = try store.events(at: Array(try Ledger.open(store: store).positions(affecting: id).prefix(limit)))
        } else if limit > 0 {
            // Stop reading at the limit (a million events are ~10 GB of raw bytes).
            struct Enough: Error {}
            do {
                try store.forEachEvent { event in
                    events.append(event)
                    if events.count >= limit { throw Enough() }
                }
            } catch is Enough {}
        }
        if arguments[Flag.json] {
            Terminal.json(.array(events.map(summary)))
        } else {
            let width = Terminal.width
            for event in events {
                let what = [event.type, event.subtype, event.status.map { "HTTP \($0)" }].compactMap { $0 }.joined(separator: " / ")
                Terminal.out(TextTable.fields(["#\(event.position)", "occurred \(Timestamp.iso8601(event.occurredAt))",
                                               "recorded \(Timestamp.iso8601(event.recordedAt))", event.kind.rawValue, what, event.eventId],
                                              maxWidth: width))
            }
            if events.isEmpty { Terminal.out("No events.") }
        }
        return .success
    }

    /// `events show` for a person: the metadata, identifiers and verification, then the decoded
    /// payload without the nested JWS strings (all of which `--json` shows, raw bytes included).
    static func text(_ event: LedgerEvent, identifiers: [EventIdentifier]) -> String {
        let what = [event.type, event.subtype, event.status.map { "HTTP \($0)" }].compactMap { $0 }.joined(separator: " / ")
        var lines = [
            "Event #\(event.position)  \(event.eventId)",
            "  \(event.kind.rawValue)\(what.isEmpty ? "" : "  \(what)")",
            "  occurred \(Timestamp.iso8601(event.occurredAt))  recorded \(Timestamp.iso8601(event.recordedAt))",
            "  source \(event.source)  origin \(event.origin.rawValue)",
            "  chain hash \(SHA256Digest.lowercaseHex(event.hash))  (\(event.raw.count) raw bytes; --json shows them)",
        ]
        lines.append("  identifiers:" + (identifiers.isEmpty ? " none" : ""))
        lines += identifiers.map { "    \($0.kind.rawValue) \(DisplayText.visible($0.value))" }
        lines.append("  verified JWS:" + (event.verification.isEmpty ? " none" : ""))
        lines += event.verification.map { "    \($0.path): root \($0.rootFingerprint.prefix(16))…, leaf \($0.leafFingerprint.prefix(16))…" }
        lines.append("  decoded (nested JWS strings left out: --json shows them):")
        lines += StoredDecoded.strip(event.decoded, kind: event.kind).prettyString().split(separator: "\n", omittingEmptySubsequences: false).map { "    " + $0 }
        return lines.joined(separator: "\n")
    }

    static func summary(_ event: LedgerEvent) -> JSONValue {
        [
            "position": .int(event.position), "eventId": .string(event.eventId), "kind": .string(event.kind.rawValue),
            "type": .optional(event.type), "subtype": .optional(event.subtype), "status": .optional(event.status),
            "occurredAt": .timestamp(event.occurredAt), "recordedAt": .timestamp(event.recordedAt),
            "source": .string(event.source), "origin": .string(event.origin.rawValue),
        ]
    }
}
