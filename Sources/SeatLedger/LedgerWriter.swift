import LedgerEvents
import LedgerIntake
import LedgerStorage

/// Reads a ledger, whether through one connection (``Ledger``) or a server's pool
/// (``LedgerPool``): GRDB's `DatabaseReader` is the model. Code written against it runs on both.
public protocol LedgerReader {
    /// Runs `body` with a handle on the ledger inside one read snapshot: it sees one prefix of
    /// the log, whatever is appended meanwhile.
    func read<T: Sendable>(_ body: @escaping @Sendable (Ledger) throws -> T) async throws -> T
}

/// Reads and writes a ledger (GRDB's `DatabaseWriter` is the model): the one way in.
///
/// Every append names its origin (``InboundMessage`` takes one and has no default), so each path
/// records the path it came by, whichever handle it appends through.
public protocol LedgerWriter: LedgerReader {
    /// Runs `body` with the read-write handle; no other write of this process runs meanwhile.
    func write<T: Sendable>(_ body: @escaping @Sendable (Ledger) throws -> T) async throws -> T
    /// Verifies and appends `messages` in one commit: one outcome each, in order (appended,
    /// duplicate, or quarantined with the raw bytes).
    func append(_ messages: [InboundMessage]) async throws -> [MessageOutcome]
}

extension LedgerPool: LedgerWriter {}

extension Ledger: LedgerWriter {
    /// ``LedgerReader/read(_:)`` on this connection (the caller's thread; one read snapshot).
    public func read<T: Sendable>(_ body: @escaping @Sendable (Ledger) throws -> T) async throws -> T {
        try store.read { try body(self) }
    }

    /// ``LedgerWriter/write(_:)`` on this connection (refused on a read-only one, or one this
    /// build must not write).
    public func write<T: Sendable>(_ body: @escaping @Sendable (Ledger) throws -> T) async throws -> T {
        if isReadOnly { throw LedgerStoreError.badConfiguration("this ledger was opened read-only: open it with readOnly false to write") }
        try requireWritable()
        return try body(self)
    }

    /// ``LedgerWriter/append(_:)``: ``ingestBatch(_:)``'s outcomes.
    public func append(_ messages: [InboundMessage]) async throws -> [MessageOutcome] {
        try ingestBatch(messages).1
    }
}
