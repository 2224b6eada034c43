import AppStoreModels
@testable import EventStore
import Foundation
import LedgerIntake
import LedgerStorage
import PostgresStore
import PostgresTestSupport
@testable import SeatLedger
import Testing

/// Text holding a NUL character (`\u0000` in Apple's JSON) is stored and read whole by the SQLite
/// store: two identifiers that differ only after a NUL stay two identifiers.
@Suite("Text with NUL on SQLite")
struct TextWithNULTests {
    /// `postgresql://` locations open in this process, as in the CLI.
    init() { PostgresLedgerEngine.register() }

    @Test("a statement binds and reads text past a NUL", arguments: ["a\u{0}b", "\u{0}", "\u{0}\u{0}x", "é\u{0}名", ""])
    func statementRoundTrip(_ text: String) throws {
        let directory = try TemporaryDirectory(label: "nul-statement")
        let store = try directory.bareStore("l.sqlite")
        let statement = try store.connection.prepare("SELECT ?, length(CAST(? AS BLOB))")
        try statement.bind(.text(text), .text(text))
        #expect(try statement.step())
        #expect(statement.text(0) == text)
        #expect(statement.int64(1) == Int64(text.utf8.count), "SQLite holds every byte")
    }

    @Test("group index rows whose identifiers differ after a NUL stay apart, staged by a rebuild or written directly",
          arguments: [true, false])
    func groupIndexKeepsIdentifiersWhole(staged: Bool) throws {
        let directory = try TemporaryDirectory(label: "nul-group-index")
        let store = try directory.bareStore("l.sqlite")
        let rows = [GroupIndexRow(identifier: "claim\u{0}1", groupKey: "g\u{0}1", role: "claim"),
                    GroupIndexRow(identifier: "claim\u{0}2", groupKey: "g2", role: "claim")]
        try store.write {
            try store.clearProjections()
            if staged {
                try store.withGroupKeyIndexBuiltAfter {
                    try store.insertRebuiltGroups(rows: Array(rows.prefix(1)))
                    try store.insertRebuiltGroups(rows: Array(rows.dropFirst()))
                }
            } else {
                try store.insertRebuiltGroups(rows: rows)
            }
        }
        #expect(try store.groupKeys(forAny: ["claim\u{0}1"]) == ["g\u{0}1"])
        #expect(try store.groupKeys(forAny: ["claim\u{0}2"]) == ["g2"])
        #expect(try store.groupKeys(forAny: ["claim"]).isEmpty, "no identifier is cut at its NUL")
        #expect(try store.groupIndexRows(groupKeys: ["g\u{0}1"]).map(\.identifier) == ["claim\u{0}1"])
        #expect(try store.allGroupKeys() == ["g2", "g\u{0}1"].sorted())
        #expect(try store.foldedGroups().map(\.groupKey) == ["g2", "g\u{0}1"].sorted())
    }
}

/// Through the library: an identifier holding a NUL (`\u0000` in Apple's JSON) is refused on both
/// backends alike (PostgreSQL `text` cannot hold one, and ledgers must stay copyable between them):
/// quarantined with its raw bytes and a reason that names it; what was stored stays intact.
@Suite("Identifiers with NUL through the ledger")
struct IdentifiersWithNULTests {
    /// `postgresql://` locations open in this process, as in the CLI.
    init() { PostgresLedgerEngine.register() }

    /// Ingests a purchase, a Get Seat Info naming a claim id with a NUL, and another one without,
    /// in one batch, and checks the outcome on `ledger`.
    static func ingestAndCheck(_ ledger: Ledger) throws {
        let factory = try PayloadFactory()
        let purchase = try factory.notification(type: "SUBSCRIBED", subtype: "INITIAL_BUY", transaction: factory.transaction(quantity: 5))
        let bad = factory.apiResponse(body: ["totalSeatCount": 5, "availableSeatCount": 2, "assignedSeatClaimIds": ["c-0", "c\u{0}1"]])
        #expect(bad.contains("\\u0000"), "the NUL arrives escaped in the JSON text, as Apple would send it")
        let good = factory.apiResponse(body: ["totalSeatCount": 5, "availableSeatCount": 3, "assignedSeatClaimIds": ["c-1"]],
                                       respondedAt: "2025-06-01T12:00:01.000Z")
        let (_, outcomes) = try ledger.ingestBatch([purchase, bad, good].map { InboundMessage(raw: Data($0.utf8), source: "t", origin: .file, acceptsAPIResponses: true) })
        try #require(outcomes.count == 3)
        #expect(outcomes[0] == .appended(positions: [1], duplicatesCarried: 0))
        guard case .quarantined = outcomes[1] else {
            Issue.record("expected the NUL event quarantined, got \(outcomes[1])")
            return
        }
        #expect(outcomes[2] == .appended(positions: [2], duplicatesCarried: 0))
        let entry = try #require(try ledger.store.quarantine().first)
        #expect(entry.raw == Data(bad.utf8), "raw bytes kept")
        #expect(entry.errorCode == "nul_in_text")
        #expect(entry.reason == "seatClaimId \"c\\u00001\" holds a NUL character (U+0000), which the ledger cannot store as text on every backend")
        #expect(try ledger.store.verifyChain().isIntact)
        #expect(try ledger.staleProjections().isEmpty)
        #expect(try ledger.groupKeys(for: "c-1") == [PayloadFactory.defaultOriginalTransactionId])
        #expect(try ledger.groupKeys(for: "c").isEmpty)
        // A retry refuses it again, for the same reason.
        let retry = try ledger.retryQuarantine(acceptAPIResponses: true)
        #expect(retry.stillRejected == 1 && retry.released == 0)
        #expect(retry.reasons.values.first?.hasPrefix("nul_in_text: seatClaimId") == true)
        #expect(try ledger.store.eventCount() == 2)
        // A library caller's source with a NUL: the refused message is quarantined with it
        // written `\u0000`, and the valid message beside it is appended (the batch is not lost).
        let later = try factory.notification(uuid: "after-nul-source", transaction: factory.transaction(quantity: 5))
        let (_, more) = try ledger.ingestBatch([InboundMessage(raw: Data("{bad".utf8), source: "hook\u{0}1", origin: .file, acceptsAPIResponses: true),
                                                InboundMessage(raw: Data(later.utf8), source: "hook-2", origin: .file, acceptsAPIResponses: true)])
        #expect(more.count == 2)
        #expect(more.last == .appended(positions: [3], duplicatesCarried: 0), "\(more)")
        #expect(try ledger.store.quarantine().contains { $0.source == "hook\\u00001" && $0.errorCode == "malformed_json" })
    }

    @Test("on SQLite")
    func onSQLite() throws {
        try Self.ingestAndCheck(TestLedger().ledger)
    }

    /// A Get Seat Info naming a claim id of 3,000 random characters (PostgreSQL cannot index it,
    /// SQLite could): refused on both alike, so the two ledgers stay the same and copyable.
    static func longIdentifierRefused(_ ledger: Ledger) throws {
        let factory = try PayloadFactory()
        let purchase = try factory.notification(type: "SUBSCRIBED", subtype: "INITIAL_BUY", transaction: factory.transaction(quantity: 5))
        var generator = SystemRandomNumberGenerator()
        let long = String((0..<3_000).map { _ in "abcdefghijklmnopqrstuvwxyz0123456789".randomElement(using: &generator)! })
        let atLimit = String(repeating: "k", count: 1_024)
        let bad = factory.apiResponse(body: ["totalSeatCount": 5, "availableSeatCount": 3, "assignedSeatClaimIds": [.string(long)]])
        let fits = factory.apiResponse(body: ["totalSeatCount": 5, "availableSeatCount": 3, "assignedSeatClaimIds": [.string(atLimit)]],
                                       respondedAt: "2025-06-01T12:00:01.000Z")
        let (_, outcomes) = try ledger.ingestBatch([purchase, bad, fits].map { InboundMessage(raw: Data($0.utf8), source: "t", origin: .file, acceptsAPIResponses: true) })
        #expect(outcomes.count == 3)
        #expect(outcomes.last == .appended(positions: [2], duplicatesCarried: 0), "1,024 bytes is stored: \(outcomes)")
        let entry = try #require(try ledger.store.quarantine().first)
        #expect(entry.errorCode == "identifier_too_long" && entry.raw == Data(bad.utf8))
        #expect(entry.reason.hasPrefix("seatClaimId is 3000 bytes (it starts \"\(long.prefix(40))…\"), over the 1024"), "\(entry.reason)")
        #expect(try ledger.store.verifyChain().isIntact)
    }

    @Test("an identifier over 1,024 bytes is identifier_too_long on SQLite, as on PostgreSQL")
    func longOnSQLite() throws {
        try Self.longIdentifierRefused(TestLedger().ledger)
    }

    @Test("an identifier over 1,024 bytes is identifier_too_long on PostgreSQL, as on SQLite")
    func longOnPostgres() throws {
        try Self.onPostgres(Self.longIdentifierRefused)
    }

    @Test("on PostgreSQL")
    func onPostgres() throws {
        try Self.onPostgres(Self.ingestAndCheck)
    }

    /// Runs `check` on a new PostgreSQL ledger with the test configuration, in a throwaway cluster.
    static func onPostgres(_ check: (Ledger) throws -> Void) throws {
        let cluster = try PostgresTestCluster()
        let template = try TestLedger()
        let store = try StoreLocation(cluster.url()).create(configuration: template.store.configuration(),
                                                            roots: template.store.trustRoots())
        try check(try Ledger.open(store: store))
        withExtendedLifetime(cluster) {}
    }

    @Test("a rejection's reason writes a NUL it quotes as \\u0000")
    func reasonEscaped() {
        #expect(IngestRejection(code: "x", reason: "a\u{0}b\u{0}").reason == "a\\u0000b\\u0000")
        #expect(IngestRejection(code: "x", reason: "plain").reason == "plain")
    }
}
