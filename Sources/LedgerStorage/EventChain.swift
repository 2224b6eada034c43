import AppStoreModels
import Foundation
import JWSVerification

/// The SHA-256 hash chain over the `events` table.
///
/// `hash(n) = SHA-256(hash(n-1) ‖ record(n))` where `record(n)` is every stored column of the
/// event row but the hashes, each length-prefixed (8-byte big-endian) so no two rows can encode
/// alike: position, event id, kind, type, subtype, status, occurred-at, recorded-at, source,
/// origin and the raw bytes. The first event's previous hash is 32 zero bytes.
public enum EventChain {
    /// The previous hash of position 1.
    public static let genesis = Data(repeating: 0, count: 32)

    /// The fields of one row that the chain covers.
    public struct Row {
        public var position: Int64
        public var eventId: String
        public var kind: String
        public var type: String?
        public var subtype: String?
        public var status: Int64?
        public var occurredAt: Int64
        public var recordedAt: Int64
        public var source: String
        public var origin: String
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
