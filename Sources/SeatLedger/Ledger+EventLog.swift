import AppStoreModels
import LedgerEvents
import LedgerStorage

extension Ledger {
    /// Where the ledger is, for messages: a file path, or a URL without its password.
    public var location: String { store.location }

    /// The position of the newest event (0 for an empty log).
    public func headPosition() throws -> Int64 {
        try store.head().position
    }

    /// How many events the log holds.
    public func eventCount() throws -> Int64 {
        try store.eventCount()
    }

    /// The latest `occurredAt` of any event (Apple's signed time), or `nil` for an empty log.
    public func lastOccurredAt() throws -> EpochMillis? {
        try store.lastOccurredAt()
    }

    /// The event `reference` names: a position (digits) when one is there, else an event id;
    /// `nil` when neither is in the log.
    public func event(named reference: String) throws -> LedgerEvent? {
        if let position = Int64(reference), let event = try store.event(at: position) { return event }
        return try store.event(id: reference)
    }

    /// The keys of the groups the event at `position` belongs to (through any identifier it
    /// carries), from the group index.
    public func groupKeys(ofEventAt position: Int64) throws -> Set<String> {
        let identifiers = Set(try store.identifiers(at: position).map(\.value))
        return try store.groupKeys(forAny: identifiers)
    }

    /// When the ledger recorded its newest event, or `nil` for an empty log.
    public func newestRecordedAt() throws -> EpochMillis? {
        let head = try store.head().position
        return head == 0 ? nil : try store.event(at: head)?.recordedAt
    }

    /// Every identifier value the events at `first` through `last` mention, with repeats (what an
    /// index of which identifiers the ledger knows reads).
    public func identifierValues(from first: Int64, through last: Int64) throws -> [String] {
        try store.identifierValues(from: first, through: last)
    }

    /// Commits a write that changes nothing but must reach the disk (a full disk, a file size
    /// limit or a database that cannot commit fails it, as it fails an append): a readiness probe.
    public func probeWrite() throws {
        try store.probeWrite()
    }

    /// The positions of events without cached projection facts (a ledger written by an older
    /// build): projections cannot be checked until `rebuild` derives them.
    public func positionsWithoutFacts() throws -> [Int64] {
        try store.positionsWithoutFacts()
    }
}
