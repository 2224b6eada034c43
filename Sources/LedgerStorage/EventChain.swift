import AppStoreModels
import Foundation
import JWSVerification

/// The SHA-256 hash chain over the `events` table.
///
/// `hash(n) = SHA-256(hash(n-1) ‖ record(n))` where `record(n)` is every stored column of the
/// event row but the hashes, so no two rows can encode alike: position, event id, kind, type,
/// subtype, status, occurred-at, recorded-at, source, origin and the raw bytes. Numbers are 8
/// bytes big-endian; text and bytes are length-prefixed (8-byte big-endian length); an optional
/// field (type, subtype, status) starts with a presence byte. The first event's previous hash is
/// 32 zero bytes.
public enum EventChain {
    /// The previous hash of position 1.
    public static let genesis = Data(repeating: 0, count: 32)

    /// The fields of one row that the chain covers.
    public struct Row {
        /// The `position` column: gap-free log position from 1 (hashed as 8 bytes big-endian).
        public var position: Int64
        /// The `event_id` column: the idempotency key (`notificationUUID` or a SHA-256 hex).
        public var eventId: String
        /// The `kind` column: `notification`, `apiResponse` or `decision`, as text.
        public var kind: String
        /// The `type` column: `notificationType`, API endpoint or decision type (presence byte, then text).
        public var type: String?
        /// The `subtype` column: the notification `subtype`, if any (presence byte, then text).
        public var subtype: String?
        /// The `status` column: an API response's HTTP status, if any (presence byte, then 8 bytes).
        public var status: Int64?
        /// The `occurred_at` column: valid time in epoch ms (a notification's `signedDate`, an envelope's `respondedAt`).
        public var occurredAt: Int64
        /// The `recorded_at` column: our clock in epoch ms when the batch committed.
        public var recordedAt: Int64
        /// The `source` column: where the event came from (`file:line`, `spool:…`, `redis:…`).
        public var source: String
        /// The `origin` column: the path it arrived by (an `EventOrigin` raw value).
        public var origin: String
        /// The `raw` column: the bytes exactly as received.
        public var raw: Data

        /// Creates a row.
        public init(position: Int64, eventId: String, kind: String, type: String?, subtype: String?, status: Int64?,
                    occurredAt: Int64, recordedAt: Int64, source: String, origin: String, raw: Data) {
            self.position = position
            self.eventId = eventId
            self.kind = kind
            self.type = type
            self.subtype = subtype
            self.status = status
            self.occurredAt = occurredAt
            self.recordedAt = recordedAt
            self.source = source
            self.origin = origin
            self.raw = raw
        }
    }

    /// The chain hash of `row` following `previous`.
    public static func hash(previous: Data, row: Row) -> Data {
        var buffer = Data()
        buffer.reserveCapacity(previous.count + row.raw.count + 256)
        buffer.append(previous)
        appendInt(row.position, to: &buffer)
        appendField(Data(row.eventId.utf8), to: &buffer)
        appendField(Data(row.kind.utf8), to: &buffer)
        appendOptional(row.type, to: &buffer)
        appendOptional(row.subtype, to: &buffer)
        if let status = row.status { buffer.append(1); appendInt(status, to: &buffer) } else { buffer.append(0) }
        appendInt(row.occurredAt, to: &buffer)
        appendInt(row.recordedAt, to: &buffer)
        appendField(Data(row.source.utf8), to: &buffer)
        appendField(Data(row.origin.utf8), to: &buffer)
        appendField(row.raw, to: &buffer)
        return SHA256Digest.hash(buffer)
    }

    private static func appendInt(_ value: Int64, to buffer: inout Data) {
        withUnsafeBytes(of: UInt64(bitPattern: value).bigEndian) { buffer.append(contentsOf: $0) }
    }

    private static func appendField(_ field: Data, to buffer: inout Data) {
        appendInt(Int64(field.count), to: &buffer)
        buffer.append(field)
    }

    private static func appendOptional(_ text: String?, to buffer: inout Data) {
        if let text { buffer.append(1); appendField(Data(text.utf8), to: &buffer) } else { buffer.append(0) }
    }
}
