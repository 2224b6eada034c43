import AppStoreModels
import LedgerEvents
import Reports

/// The identities a StoreKit event links: the app's user id for the person, and the Apple
/// identities in the same signed value (`appTransactionId`, `originalTransactionId`, and the
/// `appAccountToken` the purchase carries, if any).
///
/// What `serve`'s `POST /v1/storekit` answers as `linked` and `seatledger check` prints.
///
/// ```swift
/// let links = StoreKitLinks(identifiers: event.identifiers)
/// links.json   // {"userId": "u-42", "appTransactionId": "705…", "originalTransactionId": "2000…"}
/// ```
public struct StoreKitLinks: Sendable, Equatable {
    /// The app's own id of the person (`storeKit.userId`), when the app server gave one.
    public let userId: String?
    /// The customer's app-download id.
    public let appTransactionId: String?
    /// The subscription's original transaction id (a transaction input only).
    public let originalTransactionId: String?
    /// The UUID the app set on the purchase (a transaction input only; invited members' have none).
    public let appAccountToken: String?

    /// The links among an event's identifiers (the first of each kind).
    public init(identifiers: [EventIdentifier]) {
        func first(_ kind: IdentifierKind) -> String? { identifiers.first { $0.kind == kind }?.value }
        userId = first(.appUserId)
        appTransactionId = first(.appTransactionId)
        originalTransactionId = first(.originalTransactionId)
        appAccountToken = first(.appAccountToken)
    }

    /// The links as a JSON object, absent ones omitted.
    public var json: JSONValue {
        var fields: [String: JSONValue] = [:]
        if let userId { fields["userId"] = .string(userId) }
        if let appTransactionId { fields["appTransactionId"] = .string(appTransactionId) }
        if let originalTransactionId { fields["originalTransactionId"] = .string(originalTransactionId) }
        if let appAccountToken { fields["appAccountToken"] = .string(appAccountToken) }
        return .object(fields)
    }

    /// "user id u-42 ↔ appTransactionId 705…, originalTransactionId 2000…", for a person
    /// (values shown with ``DisplayText/visible(_:)``).
    public var text: String {
        let apple = [("appTransactionId", appTransactionId), ("originalTransactionId", originalTransactionId),
                     ("appAccountToken", appAccountToken)]
            .compactMap { name, value in value.map { "\(name) \(DisplayText.visible($0))" } }
        let who = userId.map { "user id \(DisplayText.visible($0))" } ?? "no user id"
        return apple.isEmpty ? who : "\(who) ↔ " + apple.joined(separator: ", ")
    }
}
