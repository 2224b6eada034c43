import AppStoreModels
import LedgerEvents

/// One link the app server made between its user id and Apple's identities of a person (a
/// StoreKit event): the app server's word, authenticated by its token; the transaction's
/// content is Apple's.
public struct IdentityLink: Sendable, Hashable {
    /// The app's user id.
    public let userId: String
    /// The `appTransactionId` the event carries (its transaction's or its AppTransaction's), if any.
    public let appTransactionId: String?
    /// The `originalTransactionId` of the event's transaction, if it carries one.
    public let originalTransactionId: String?
    /// The `appAccountToken` of the event's transaction, if it has one.
    public let appAccountToken: String?
    /// The StoreKit event that made the link.
    public let eventId: String
    /// When the ledger recorded it.
    public let recordedAt: EpochMillis

    /// Creates a link.
    public init(userId: String, appTransactionId: String?, originalTransactionId: String?, appAccountToken: String?,
                eventId: String, recordedAt: EpochMillis) {
        self.userId = userId
        self.appTransactionId = appTransactionId
        self.originalTransactionId = originalTransactionId
        self.appAccountToken = appAccountToken
        self.eventId = eventId
        self.recordedAt = recordedAt
    }

    /// The JSON form (an element of `person.links`).
    public var json: JSONValue {
        ["userId": .string(userId), "appTransactionId": .optional(appTransactionId),
         "originalTransactionId": .optional(originalTransactionId), "appAccountToken": .optional(appAccountToken),
         "eventId": .string(eventId), "recordedAt": .timestamp(recordedAt)]
    }

    /// The Apple identifiers the link names.
    public var appleIdentifiers: [String] { [appTransactionId, originalTransactionId].compactMap { $0 } }

    /// The links the StoreKit events among `facts` make (retracted ones withdrawn by the caller).
    public static func links(in facts: [EventFacts]) -> [IdentityLink] {
        facts.compactMap { fact in
            guard fact.kind == .storeKit, let userId = fact.linkedUserId else { return nil }
            let transaction = fact.transactions.first
            return IdentityLink(userId: userId, appTransactionId: fact.appTransactionOfApp ?? transaction?.appTransactionId,
                                originalTransactionId: transaction?.originalTransactionId, appAccountToken: fact.appAccountToken,
                                eventId: fact.eventId, recordedAt: fact.recordedAt)
        }
    }
}

/// What the links say about a person: more than one Apple Account for one user id, or one Apple
/// identity linked to more than one user id (a shared device). Both links are kept and answered;
/// nothing is overwritten.
public struct LinkConflict: Sendable, Hashable {
    /// `USER_HAS_SEVERAL_APPLE_ACCOUNTS` or `APPLE_IDENTITY_HAS_SEVERAL_USERS`.
    public let kind: String
    /// The user id or Apple identifier the conflict is about.
    public let subject: String
    /// The other side's values, sorted.
    public let linkedTo: [String]

    /// Creates a conflict.
    public init(kind: String, subject: String, linkedTo: [String]) {
        self.kind = kind
        self.subject = subject
        self.linkedTo = linkedTo
    }

    /// The JSON form (an element of `person.conflicts`).
    public var json: JSONValue {
        ["kind": .string(kind), "subject": .string(subject), "linkedTo": .array(linkedTo.map(JSONValue.string))]
    }
}

extension IdentityLink {
    /// The conflicts among `links`: a user id linked to several `appTransactionId`s (Apple
    /// Accounts), and an Apple identifier linked to several user ids.
    public static func conflicts(_ links: [IdentityLink]) -> [LinkConflict] {
        var accountsOfUser: [String: Set<String>] = [:], usersOfApple: [String: Set<String>] = [:]
        for link in links {
            if let app = link.appTransactionId { accountsOfUser[link.userId, default: []].insert(app) }
            for id in link.appleIdentifiers { usersOfApple[id, default: []].insert(link.userId) }
        }
        let several = accountsOfUser.filter { $0.value.count > 1 }.map {
            LinkConflict(kind: "USER_HAS_SEVERAL_APPLE_ACCOUNTS", subject: $0.key, linkedTo: $0.value.sorted())
        }
        let shared = usersOfApple.filter { $0.value.count > 1 }.map {
            LinkConflict(kind: "APPLE_IDENTITY_HAS_SEVERAL_USERS", subject: $0.key, linkedTo: $0.value.sorted())
        }
        return (several + shared).sorted { ($0.kind, $0.subject) < ($1.kind, $1.subject) }
    }
}
