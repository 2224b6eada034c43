import AppStoreModels
import Foundation
import LedgerEvents
import LedgerStorage

extension MessageDecoder {
    /// The `notificationUUID` a body in Apple's form (`{"signedPayload":"…"}`) claims, read from
    /// the JWS payload **without verifying it**; `nil` for any other body.
    ///
    /// Only a lookup key: a re-run skips a line when the event of that id holds exactly the same
    /// bytes (``Ledger/markingStored(_:)``), which were verified when they were stored. Any other
    /// line, including one that reuses a stored id with different bytes, is verified as usual.
    ///
    /// Byte scans (`memchr`), not a parse or `String` views: it runs serially on the writer thread
    /// for every line of a re-run (`Tools/bench/PERFORMANCE.md`).
    package static func claimedNotificationUUID(_ raw: Data) -> String? {
        // The payload is the JWS's second segment: between the first two dots of the body.
        let payload = raw.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Data? in
            guard let base = bytes.baseAddress, let first = offset(of: UInt8(ascii: "."), in: bytes, from: 0),
                  let second = offset(of: UInt8(ascii: "."), in: bytes, from: first + 1) else { return nil }
            let segment = UnsafeBufferPointer(start: (base + first + 1).assumingMemoryBound(to: UInt8.self), count: second - first - 1)
            return Base64URL.decode(buffer: segment)
        }
        guard let payload else { return nil }
        // A byte search, not a parse: whatever it finds is only looked up, and a line is skipped
        // only when the event found holds exactly its bytes.
        return payload.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> String? in
            let key = notificationUUIDKey
            var from = 0
            while let hit = offset(of: key[0], in: bytes, from: from) {
                if hit + key.count <= bytes.count, key.withUnsafeBytes({ memcmp(bytes.baseAddress! + hit, $0.baseAddress!, key.count) }) == 0 {
                    let start = hit + key.count
                    guard let end = offset(of: UInt8(ascii: "\""), in: bytes, from: start), end > start else { return nil }
                    return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
                }
                from = hit + 1
            }
            return nil
        }
    }

    /// The offset of the first `byte` in `bytes` at or after `from`.
    private static func offset(of byte: UInt8, in bytes: UnsafeRawBufferPointer, from: Int) -> Int? {
        guard let base = bytes.baseAddress, from < bytes.count, let hit = memchr(base + from, Int32(byte), bytes.count - from) else { return nil }
        return base.distance(to: UnsafeRawPointer(hit))
    }

    private static let notificationUUIDKey: [UInt8] = Array(#""notificationUUID":""#.utf8)
}
