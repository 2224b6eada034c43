import LedgerStorage
import Foundation
import PostgresClient

extension PostgresEventStore: RecordChainStorage {
    /// The last record-chain link, after taking the append lock (`ledger_head FOR UPDATE`, which
    /// every append holds already): writers of configuration, roots and quarantine rows queue on
    /// it, so links are gap-free and in commit order, as positions are.
    package func lastRecordLink() throws -> (seq: Int64, hash: Data)? {
        _ = try connection.run("SELECT position FROM ledger_head FOR UPDATE")
        guard let row = try connection.run("SELECT seq, hash FROM record_chain ORDER BY seq DESC LIMIT 1").first else { return nil }
        return (try row.int64(0), try row.bytea(1))
    }

    /// Stores one record-chain link.
    package func insertRecordLink(_ link: RecordChain.Link) throws {
        _ = try connection.run(
            "INSERT INTO record_chain (seq, kind, subject, digest, prev_hash, hash) VALUES ($1, $2, $3, $4, $5, $6)",
            [.int64(link.seq), .text(link.kind.rawValue), .text(link.subject), .bytea(link.digest), .bytea(link.previousHash),
             .bytea(link.hash)])
    }

    /// ``appendRecordLinks(_:)`` when the ledger has a record chain (``hasRecordChain``).
    public func linkRecords(_ items: [(kind: RecordChain.Kind, subject: String, digest: Data)]) throws {
        guard hasRecordChain else { return }
        try appendRecordLinks(items)
    }
}
