import AppStoreModels
import Foundation
import LedgerEvents

/// The commit sequence, written once for every engine over its ``AppendRows``: lock the head,
/// look up the batch's stored ids, plan (``AppendPlan``, ``QuarantinePlan``), write the rows,
/// link the new quarantine rows into the record chain. Each runs inside the caller's write
/// transaction and returns; the caller updates the projections next, in the same transaction:
///
/// ```swift
/// let result = try store.write {
///     let result = try store.append(events: events, rejections: rejections)
///     try maintainer.update(after: result.appended)
///     return result
/// }
/// ```
extension LedgerStore {
    /// Appends verified events and quarantines rejections, inside the caller's write transaction.
    ///
    /// Duplicates (an id already stored, or twice in the batch) append nothing and are logged in
    /// `arrivals`; the same refused bytes for the same reason are kept once while open.
    public func append(events: [NewEvent], rejections: [QuarantineItem] = []) throws -> BatchResult {
        guard !events.isEmpty || !rejections.isEmpty else { return BatchResult(outcomes: [], quarantineIds: [], appended: []) }
        let now = clock()
        let head = try lockHeadForAppend()
        let stored = events.isEmpty ? [:] : try storedPositions(ofEventIds: AppendPlan.distinctIds(of: events))
        let plan = AppendPlan(events: events, head: head, recordedAt: now, stored: stored)
        let open = rejections.isEmpty ? [:] : try openQuarantineIds(digests: Set(QuarantinePlan.digests(of: rejections)))
        let quarantine = QuarantinePlan(rejections: rejections, open: open)
        let newIds = try writeAppend(plan, quarantine: quarantine)
        try linkRecords(zip(newIds, quarantine.new).map { id, entry in
            let record = QuarantineRecord(id: id, recordedAt: now, source: entry.item.source, errorCode: entry.item.errorCode,
                                          reason: entry.item.reason, raw: entry.item.raw, state: "open", resolvedAt: nil, resolution: nil)
            return (.quarantine, String(id), RecordChain.quarantineDigest(record))
        })
        let (ids, earlier) = quarantine.quarantineIds(newIds: newIds)
        return BatchResult(outcomes: plan.outcomes, quarantineIds: ids, appended: plan.appended, earlierQuarantineIds: earlier,
                           head: plan.head.position)
    }

    /// Appends `retraction` (a decision withdrawing the event `eventId`) inside the caller's write
    /// transaction, unless an event already names `eventId` as its
    /// ``IdentifierKind/retractedEventId``: the append lock is taken first and the check read
    /// under it, so however many retractions of one event race, one is appended and the others
    /// throw ``EventAlreadyRetracted`` and append nothing.
    public func appendRetraction(_ retraction: NewEvent, retracting eventId: String) throws -> BatchResult {
        _ = try lockHeadForAppend()
        try EventAlreadyRetracted.check(eventId, retractions: positions(mentioning: eventId, kind: .retractedEventId))
        return try append(events: [retraction])
    }

    /// Appends events that were quarantined and now verify, and resolves their quarantine rows
    /// (``QuarantineRetryPlan``), inside the caller's write transaction. The rows are locked and
    /// their states read first: an input's own event whose row another command resolved since the
    /// caller read it throws ``QuarantineItemNotOpen`` (a dismissal is not overridden by a retry,
    /// nor a retry recorded twice). A retried item rejected again stays `open`.
    public func appendRetry(events: [NewEventForRetry]) throws -> BatchResult {
        let states = try lockQuarantineStates(ids: Array(Set(events.map(\.quarantineId))).sorted())
        try QuarantineItemNotOpen.check(events, states: states)
        let result = try append(events: events.map(\.event))
        let resolutions = QuarantineRetryPlan(items: events, outcomes: result.outcomes).resolutions
        guard !resolutions.isEmpty else { return result }
        try resolveQuarantine(resolutions, at: clock())
        try linkRecords(try resolutions.compactMap { resolved in
            try quarantineRecord(id: resolved.id).map { (.quarantine, String(resolved.id), RecordChain.quarantineDigest($0)) }
        })
        return result
    }

    /// ``append(events:rejections:)`` in a write transaction of its own (no projections updated:
    /// for stores without a ledger's projections, tests and tools).
    public func commit(events: [NewEvent], rejections: [QuarantineItem] = []) throws -> BatchResult {
        try write { try append(events: events, rejections: rejections) }
    }

    /// ``appendRetry(events:)`` in a write transaction of its own.
    public func commitRetry(events: [NewEventForRetry]) throws -> BatchResult {
        try write { try appendRetry(events: events) }
    }

    /// ``appendRetraction(_:retracting:)`` in a write transaction of its own.
    public func commitRetraction(_ retraction: NewEvent, retracting eventId: String) throws -> BatchResult {
        try write { try appendRetraction(retraction, retracting: eventId) }
    }
}
