import LedgerEvents
import Projections

/// Events whose stored text would hold a NUL character, or an indexed value longer than every
/// backend can index, are refused on every backend.
///
/// A NUL (`\u0000` in Apple's JSON) in an identifier, an event id, a type or a subtype would be
/// stored as text: PostgreSQL's `text` cannot hold one (the whole append would fail), and a ledger
/// that only one backend could hold could not be copied to the other. The decoded JSON itself
/// escapes it, so a NUL elsewhere in a payload is kept as it came. An identifier, event id, type or
/// subtype over ``maxIndexedTextBytes`` is refused for the same reason: PostgreSQL's b-tree index
/// rows hold at most 2,704 bytes, SQLite's any length. See `Events/README.md`.
extension MessageDecoder {
    /// The longest identifier, event id, type or subtype stored (UTF-8 bytes): two of them with a
    /// role fit a PostgreSQL index row (`group_index`: identifier and group key). Apple's are under 100.
    static let maxIndexedTextBytes = 1_024

    /// Why `event` (with its projection `facts`, when known) cannot be stored, or `nil`.
    ///
    /// Each text is looked at once (this runs for every ingested event); an over-long value is
    /// named before a NUL, the event's own fields before its identifiers.
    static func storedTextProblem(_ event: NewEvent, facts: EventFacts?) -> IngestRejection? {
        var long: IngestRejection?
        var nul: IngestRejection?
        func look(_ field: @autoclosure () -> String, _ text: String) {
            guard long == nil else { return }
            if text.utf8.count > maxIndexedTextBytes {
                long = .tooLongToIndex(field(), text)
            } else if nul == nil, text.utf8.contains(0) {
                nul = .nulInText(field(), text)
            }
        }
        look("the event id", event.eventId)
        if let type = event.type { look("the type", type) }
        if let subtype = event.subtype { look("the subtype", subtype) }
        // The source is not indexed: only a NUL matters there.
        if nul == nil, event.source.utf8.contains(0) { nul = .nulInText("the source", event.source) }
        for identifier in event.identifiers { look(identifier.kind.rawValue, identifier.value) }
        facts?.forEachIdentifier { look("an identifier", $0) }
        return long ?? nul
    }

    /// `result` unless one of its events cannot be stored (``storedTextProblem(_:facts:)``).
    static func refusingUnstorableText(_ result: Result<[NewEvent], IngestRejection>, facts: [EventFacts]?)
        -> Result<[NewEvent], IngestRejection> {
        guard case .success(let events) = result else { return result }
        for (index, event) in events.enumerated() {
            if let problem = storedTextProblem(event, facts: facts.flatMap { index < $0.count ? $0[index] : nil }) {
                return .failure(index == 0 ? problem : IngestRejection(code: problem.code, reason: "item \(index): \(problem.reason)"))
            }
        }
        return result
    }
}

extension IngestRejection {
    /// `value` (named by `field`) is longer than every backend can index.
    static func tooLongToIndex(_ field: String, _ value: String) -> Self {
        Self(code: .identifierTooLong,
             reason: "\(field) is \(value.utf8.count) bytes (it starts \"\(value.prefix(40))…\"), over the "
                + "\(MessageDecoder.maxIndexedTextBytes) the ledger indexes on every backend (PostgreSQL's index rows hold 2,704 bytes)")
    }

    /// `value` (named by `field`) holds a NUL character.
    static func nulInText(_ field: String, _ value: String) -> Self {
        Self(code: .nulInText,
             reason: "\(field) \"\(value)\" holds a NUL character (U+0000), which the ledger cannot store as text on every backend")
    }
}
