import LedgerEvents
import LedgerIntake

extension Ledger {
    /// `batch`, with each message whose exact bytes are already stored as an event marked with
    /// that event, so that the decoder skips it and the commit reports it as a duplicate.
    ///
    /// What makes a re-run of an ingest cheap: a line already stored costs one indexed read
    /// instead of three signature verifications (the figures: `Tools/bench/PERFORMANCE.md`).
    /// Only notifications in Apple's form are looked up (their event id is the
    /// `notificationUUID`); everything else is decoded as before.
    func markingStored(_ batch: [InboundMessage]) throws -> [InboundMessage] {
        try batch.map { message in
            guard message.preRejection == nil, let uuid = MessageDecoder.claimedNotificationUUID(message.raw),
                  let stored = try store.storedBytes(ofEventId: uuid), stored.raw == message.raw else { return message }
            // The store finds this id (events are never removed) and records a duplicate arrival
            // from this source, as it does for a decoded duplicate; nothing else of it is read.
            var marked = message
            marked.stored = NewEvent(eventId: uuid, kind: .notification, type: nil, subtype: nil, status: nil, occurredAt: 0,
                                     raw: message.raw, decoded: .null, identifiers: [], verification: [],
                                     source: message.source, origin: message.origin)
            return marked
        }
    }
}
