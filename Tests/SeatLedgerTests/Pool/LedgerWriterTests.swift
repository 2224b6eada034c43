import Foundation
import LedgerEvents
import LedgerIntake
import LedgerStorage
import SeatLedger
import Testing

/// `LedgerWriter`: the same code appends and reads through one connection and through the pool.
@Suite("one way in: Ledger and LedgerPool are both LedgerWriters")
struct LedgerWriterTests {
    /// Appends one message of each origin given through `writer`, then reads the stored origins back.
    static func appendAndReadBack(_ writer: some LedgerWriter, lines: [String], origins: [EventOrigin]) async throws -> [String] {
        let messages = zip(lines, origins).map { InboundMessage(raw: Data($0.utf8), source: "writer-test", origin: $1) }
        let outcomes = try await writer.append(messages)
        #expect(outcomes.allSatisfy { if case .appended = $0 { true } else { false } }, "\(outcomes)")
        let count = try await writer.read { try $0.store.eventCount() }
        return try await writer.read { ledger in try (1...count).compactMap { try ledger.store.event(at: $0)?.origin.rawValue } }
    }

    @Test("each append records the origin its message names, through either handle")
    func bothHandles() async throws {
        let factory = try PayloadFactory()
        let lines = try (0..<3).map { index in
            try factory.notification(transaction: factory.transaction(originalTransactionId: "21000000000000\(10 + index)"))
        }
        let origins: [EventOrigin] = [.webhook, .file, .queue]
        let single = try TestLedger()
        #expect(try await Self.appendAndReadBack(single.ledger, lines: lines, origins: origins) == ["webhook", "file", "queue"])
        let pooled = try TestLedger()
        let pool = try LedgerPool.open(path: pooled.path)
        #expect(try await Self.appendAndReadBack(pool, lines: lines, origins: origins) == ["webhook", "file", "queue"])
        await pool.close()
        // A read-only connection refuses a write through the same protocol.
        let readOnly = try Ledger.open(path: single.path, readOnly: true)
        await #expect(throws: LedgerStoreError.self) { try await readOnly.write { _ in 1 } }
    }
}
