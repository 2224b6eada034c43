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
        // The payload is the JWS's second segment: between the first two dots of the body. A byte
        // search, not a parse: whatever it finds is only looked up, and a line is skipped only
        // when the event found holds exactly its bytes.
        guard let payload = raw.withUnsafeBytes({ ByteScan.jwsPayload(in: $0) }) else { return nil }
        return payload.withUnsafeBytes { ByteScan.stringValue(after: notificationUUIDKey, in: $0) }
    }

    private static let notificationUUIDKey: [UInt8] = Array(#""notificationUUID":""#.utf8)
}
