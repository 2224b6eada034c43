/// What `verify` checks of the `arrivals` log (one row per message received: the first arrival of
/// every event, then each duplicate), from ``LedgerStore/arrivalSummary(limit:)``.
///
/// Arrival ids are assigned gap-free (`max + 1`) on both engines, and every append and copy writes
/// an event's first arrival, so a row deleted with another tool shows as a missing id or an event
/// without its arrival. A row deleted from the end of the log is not seen (as for the chains).
public struct ArrivalSummary: Sendable, Equatable {
    /// Rows in `arrivals`.
    public let rows: Int64
    /// The highest arrival id (0: none).
    public let highestId: Int64
    /// Events without a first (non-duplicate) arrival, at most the limit asked for.
    public let eventsWithoutArrival: [String]
    /// How many events have none.
    public let eventsWithoutArrivalCount: Int64

    /// Creates a summary.
    public init(rows: Int64, highestId: Int64, eventsWithoutArrival: [String], eventsWithoutArrivalCount: Int64) {
        self.rows = rows
        self.highestId = highestId
        self.eventsWithoutArrival = eventsWithoutArrival
        self.eventsWithoutArrivalCount = eventsWithoutArrivalCount
    }

    /// What is wrong, in words (empty: nothing).
    public var findings: [String] {
        var findings: [String] = []
        if rows != highestId {
            findings.append("arrivals: \(highestId - rows) of the ids 1…\(highestId) are missing (arrival records deleted outside SeatLedger)")
        }
        if eventsWithoutArrivalCount > 0 {
            findings.append("arrivals: \(eventsWithoutArrivalCount) event(s) have no arrival record (deleted outside SeatLedger): "
                            + eventsWithoutArrival.joined(separator: ", ") + (eventsWithoutArrivalCount > Int64(eventsWithoutArrival.count) ? ", …" : ""))
        }
        return findings
    }
}
