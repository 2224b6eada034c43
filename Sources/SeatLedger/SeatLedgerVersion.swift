import EventStore
import LedgerStorage

/// The version of this build and of the formats it writes, as `seatledger --version` prints them.
public enum SeatLedgerVersion {
    /// The release (semantic versioning; no release has been tagged yet).
    public static let release = "0.1.0-dev"
    /// The SQLite ledger file's schema version (`PRAGMA user_version`); a newer file is refused.
    public static var ledgerSchema: Int64 { EventStore.schemaVersion }
    /// The version of the decoder that fills `event_decoded` (older rows are re-decoded on demand).
    public static var decoder: Int64 { EventStore.decoderVersion }
}
