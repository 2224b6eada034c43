import AppStoreModels
import Foundation
import JWSVerification
import LedgerEvents
import LedgerStorage
import Projections
import Reports

/// What ``Ledger/retract(_:reason:by:)`` recorded.
public struct RetractionReceipt: Sendable, Equatable {
    /// The retraction's position in the log.
    public let position: Int64
    /// The retraction's event id.
    public let eventId: String
    /// The retracted event's position.
    public let retractedPosition: Int64
    /// The retracted event's id.
    public let retractedEventId: String
    /// The groups whose projections changed (their keys, sorted).
    public let groupKeys: [String]
}

extension Ledger {
    /// Withdraws one event from every projection: appends a retraction (a `decision` event: who,
    /// why, which event and a digest of its bytes; hash-chained like every event). Nothing is
    /// deleted; the retracted event stays in the log, `replay` lists it as retracted, and
    /// `--known-at` before the retraction still shows what was believed then.
    ///
    /// `ref` is a position or an event id. A decision (a dismissal or another retraction) cannot
    /// be retracted, nor an event twice.
    @discardableResult
    public func retract(_ ref: String, reason: String, by actor: String) throws -> RetractionReceipt {
        try requireWritable()
        let trimmed = reason.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw CorrectionError("a retraction needs a reason (--reason)") }
        let found = try Int64(ref).flatMap { try store.event(at: $0) } ?? store.event(id: ref)
        guard let target = found else {
            throw CorrectionError("no event `\(DisplayText.visible(ref))` in \(store.location): give a position or an event id")
        }
        guard target.kind != .decision else {
            throw CorrectionError(
                "event #\(target.position) is an operator's decision (\(target.type ?? "decision")), not a message: it cannot be retracted")
        }
        if let earlier = try store.positions(mentioning: target.eventId, kind: .retractedEventId).min() {
            throw CorrectionError("event #\(target.position) was already retracted at position \(earlier)")
        }
        // The identifiers the projections route the retracted event by (its facts'), so the
        // retraction is read with exactly the groups' events it concerned; the index keys the
        // retraction under the same values.
        let routingSet = EventFacts(target).identifiers
        let routing = routingSet.sorted()
        let now = store.clock()
        let decision: JSONValue = ["decision": [
            "action": .string(Retraction.action), "eventId": .string(target.eventId), "position": .int(target.position),
            "rawSHA256": .string(SHA256Digest.hex(target.raw)), "identifiers": .array(routing.map(JSONValue.string)),
            "reason": .string(trimmed), "by": .string(actor), "at": .int(now),
        ]]
        let raw = decision.canonicalData()
        var keys = try store.identifiers(at: target.position).filter { routingSet.contains($0.value) }
        keys.append(EventIdentifier(.retractedEventId, target.eventId))
        let event = NewEvent(eventId: SHA256Digest.hex(raw), kind: .decision, type: Retraction.eventType, subtype: nil, status: nil,
                             occurredAt: now, raw: raw, decoded: decision, identifiers: keys, verification: [],
                             source: "retract #\(target.position)", origin: .operatorDecision)
        let maintainer = ProjectionMaintainer(store: store)
        // Checked again inside the committing transaction, under the append lock: the check above
        // is a read before it, and two retractions racing past it must not both be recorded.
        let result: BatchResult
        do {
            result = try store.write {
                let result = try store.appendRetraction(event, retracting: target.eventId)
                try maintainer.update(after: result.appended)
                return result
            }
        } catch let error as EventAlreadyRetracted {
            throw CorrectionError("event #\(target.position) was already retracted at position \(error.retractionPosition)")
        }
        guard case .appended(let position)? = result.outcomes.first else {
            throw CorrectionError("the retraction of #\(target.position) was already recorded")
        }
        // A build that does not know retractions must not fold this ledger (see ``ProjectionRules``).
        try recordCurrentProjectionRules()
        let groups = try store.groupIndexRows(groupKeys: store.groupKeys(forAny: routingSet))
            .filter { routingSet.contains($0.identifier) && $0.role != "memberRef" && $0.role != "product" }.map(\.groupKey)
        return RetractionReceipt(position: position, eventId: event.eventId, retractedPosition: target.position,
                                 retractedEventId: target.eventId, groupKeys: Set(groups).sorted())
    }
}
