import AppStoreModels
import Foundation
import LedgerEvents

/// Compact binary storage form of ``EventFacts`` (a cache: the raw event stays the truth).
///
/// Tagged fields, varint integers and length-prefixed strings: a rebuild decodes a few hundred
/// bytes per event without a JSON parser. Version byte first; an unknown version or a damaged
/// blob decodes to `nil` and the caller re-derives the facts from the event.
public enum FactsCodec {
    static let version: UInt8 = 1

    /// Encodes facts.
    public static func encode(_ facts: EventFacts) -> Data {
        var w = ByteWriter()
        w.byte(version)
        w.int(facts.position); w.string(facts.eventId); w.string(facts.kind.rawValue)
        w.int(facts.occurredAt); w.int(facts.recordedAt); w.string(facts.origin.rawValue)
        w.optional(1, facts.type); w.optional(2, facts.subtype); w.optional(3, facts.status)
        for tx in facts.transactions {
            w.byte(4)
            w.string(tx.transactionId); w.string(tx.originalTransactionId); w.bool(tx.isMultiSeat)
            w.optional(1, tx.appTransactionId); w.optional(2, tx.productId); w.optional(3, tx.ownership?.rawValue)
            w.optional(4, tx.quantity); w.optional(5, tx.purchaseDate); w.optional(6, tx.expiresDate)
            w.optional(7, tx.revocationDate); w.optional(8, tx.revocationType?.rawValue); w.optional(9, tx.revokedSeatQuantity)
            w.optional(10, tx.invitationManagement?.rawValue); w.optional(11, tx.signedDate)
            w.byte(0)
        }
        for renewal in facts.renewals {
            w.byte(5)
            w.string(renewal.originalTransactionId)
            w.optional(1, renewal.renewalQuantity); w.optional(2, renewal.gracePeriodExpiresDate)
            w.optional(3, renewal.isInBillingRetryPeriod.map { $0 ? 1 : 0 }); w.optional(4, renewal.autoRenewStatus)
            w.optional(5, renewal.signedDate)
            w.byte(0)
        }
        for id in facts.unclaimSeatIds { w.byte(6); w.string(id) }
        w.optional(7, facts.unclaimOriginalTransactionId); w.optional(8, facts.seatPathTransactionId)
        w.optional(9, facts.seatPathClaimId); w.optional(10, facts.claimedSeatId); w.optional(11, facts.requestIdentifier)
        w.optional(12, facts.requestAppTransactionId); w.optional(13, facts.memberRef)
        if let info = facts.seatInfo {
            w.byte(14)
            w.optional(1, info.totalSeatCount); w.optional(2, info.availableSeatCount)
            for id in info.assignedSeatClaimIds { w.byte(3); w.string(id) }
            w.byte(0)
        }
        w.optional(15, facts.customerId)
        for group in facts.customerGroups { w.byte(16); w.string(group.groupId); w.optional(1, group.groupType); w.byte(0) }
        w.optional(17, facts.membersGroupId)
        for id in facts.memberAppTransactionIds { w.byte(18); w.string(id) }
        w.optional(19, facts.errorCode)
        w.optional(20, facts.retractedEventId)
        for id in facts.retractedIdentifiers { w.byte(21); w.string(id) }
        w.optional(22, facts.linkedUserId); w.optional(23, facts.appTransactionOfApp); w.optional(24, facts.appAccountToken)
        w.byte(0)
        return Data(w.bytes)
    }

    /// Decodes facts; `nil` for another version or damaged bytes.
    public static func decode(_ data: Data) -> EventFacts? {
        data.withUnsafeBytes { decode(bytes: $0) }
    }

    /// Decodes facts from bytes in place (no copy); `nil` for another version or damaged bytes.
    public static func decode(bytes raw: UnsafeRawBufferPointer) -> EventFacts? {
        var r = ByteReader(raw.bindMemory(to: UInt8.self))
        guard r.byte() == version, let position = r.int(), let eventId = r.string(), let kind = r.string(),
              let occurredAt = r.int(), let recordedAt = r.int(), let origin = r.string() else { return nil }
        var facts = EventFacts(position: position, eventId: eventId, kind: EventKind(rawValue: kind), occurredAt: occurredAt,
                               recordedAt: recordedAt, origin: EventOrigin(rawValue: origin))
        while let tag = r.byte() {
            switch tag {
            case 0: return facts
            case 1: facts.type = r.string()
            case 2: facts.subtype = r.string()
            case 3: facts.status = r.int()
            case 4:
                guard let id = r.string(), let otid = r.string(), let multi = r.bool() else { return nil }
                var tx = TransactionFact(transactionId: id, originalTransactionId: otid, isMultiSeat: multi)
                while let field = r.byte(), field != 0 {
                    switch field {
                    case 1: tx.appTransactionId = r.string()
                    case 2: tx.productId = r.string()
                    case 3: tx.ownership = r.string().map(InAppOwnershipType.init(rawValue:))
                    case 4: tx.quantity = r.int()
                    case 5: tx.purchaseDate = r.int()
                    case 6: tx.expiresDate = r.int()
                    case 7: tx.revocationDate = r.int()
                    case 8: tx.revocationType = r.string().map(RevocationType.init(rawValue:))
                    case 9: tx.revokedSeatQuantity = r.int()
                    case 10: tx.invitationManagement = r.string().map(InvitationManagement.init(rawValue:))
                    case 11: tx.signedDate = r.int()
                    default: return nil
                    }
                }
                facts.transactions.append(tx)
            case 5:
                guard let otid = r.string() else { return nil }
                var renewal = RenewalFact(originalTransactionId: otid)
                while let field = r.byte(), field != 0 {
                    switch field {
                    case 1: renewal.renewalQuantity = r.int()
                    case 2: renewal.gracePeriodExpiresDate = r.int()
                    case 3: renewal.isInBillingRetryPeriod = r.int().map { $0 != 0 }
                    case 4: renewal.autoRenewStatus = r.int()
                    case 5: renewal.signedDate = r.int()
                    default: return nil
                    }
                }
                facts.renewals.append(renewal)
            case 6: guard let id = r.string() else { return nil }; facts.unclaimSeatIds.append(id)
            case 7: facts.unclaimOriginalTransactionId = r.string()
            case 8: facts.seatPathTransactionId = r.string()
            case 9: facts.seatPathClaimId = r.string()
            case 10: facts.claimedSeatId = r.string()
            case 11: facts.requestIdentifier = r.string()
            case 12: facts.requestAppTransactionId = r.string()
            case 13: facts.memberRef = r.string()
            case 14:
                var info = SeatInfoFact(totalSeatCount: nil, availableSeatCount: nil, assignedSeatClaimIds: [])
                while let field = r.byte(), field != 0 {
                    switch field {
                    case 1: info.totalSeatCount = r.int()
                    case 2: info.availableSeatCount = r.int()
                    case 3: guard let id = r.string() else { return nil }; info.assignedSeatClaimIds.append(id)
                    default: return nil
                    }
                }
                facts.seatInfo = info
            case 15: facts.customerId = r.string()
            case 16:
                guard let groupId = r.string() else { return nil }
                var group = CustomerGroupFact(groupId: groupId, groupType: nil)
                while let field = r.byte(), field != 0 {
                    guard field == 1 else { return nil }
                    group.groupType = r.string()
                }
                facts.customerGroups.append(group)
            case 17: facts.membersGroupId = r.string()
            case 18: guard let id = r.string() else { return nil }; facts.memberAppTransactionIds.append(id)
            case 19: facts.errorCode = r.int()
            case 20: facts.retractedEventId = r.string()
            case 21: guard let id = r.string() else { return nil }; facts.retractedIdentifiers.append(id)
            case 22: facts.linkedUserId = r.string()
            case 23: facts.appTransactionOfApp = r.string()
            case 24: facts.appAccountToken = r.string()
            default: return nil
            }
        }
        return nil  // no terminator: truncated
    }
}

/// Appends varints and length-prefixed strings.
struct ByteWriter {
    var bytes: [UInt8] = []

    init() { bytes.reserveCapacity(256) }

    mutating func byte(_ value: UInt8) { bytes.append(value) }
    mutating func bool(_ value: Bool) { bytes.append(value ? 1 : 0) }

    mutating func int(_ value: Int64) {
        var zigzag = UInt64(bitPattern: (value << 1) ^ (value >> 63))
        while zigzag >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: zigzag) | 0x80)
            zigzag >>= 7
        }
        bytes.append(UInt8(zigzag))
    }

    mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            int(Int64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    mutating func optional(_ tag: UInt8, _ value: String?) { if let value { byte(tag); string(value) } }
    mutating func optional(_ tag: UInt8, _ value: Int64?) { if let value { byte(tag); int(value) } }
}

/// Reads what ``ByteWriter`` wrote; every read returns `nil` past the end.
struct ByteReader {
    let buffer: UnsafeBufferPointer<UInt8>
    var index = 0

    init(_ buffer: UnsafeBufferPointer<UInt8>) { self.buffer = buffer }

    mutating func byte() -> UInt8? {
        guard index < buffer.count else { return nil }
        defer { index += 1 }
        return buffer[index]
    }

    mutating func bool() -> Bool? { byte().map { $0 != 0 } }

    mutating func int() -> Int64? {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while let b = byte() {
            result |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return Int64(bitPattern: (result >> 1) ^ (0 &- (result & 1))) }
            shift += 7
            if shift > 63 { return nil }
        }
        return nil
    }

    mutating func string() -> String? {
        // `length <= count - index`, not `index + length <= count`: a damaged length near Int64.max must not overflow.
        guard let length = int(), length >= 0, length <= Int64(buffer.count - index) else { return nil }
        defer { index += Int(length) }
        return String(decoding: UnsafeBufferPointer(rebasing: buffer[index..<index + Int(length)]), as: UTF8.self)
    }
}
