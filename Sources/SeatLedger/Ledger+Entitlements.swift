import AppStoreModels
import LedgerEvents
import LedgerStorage
import Projections

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

    /// The JSON form (an element of `person.links`).
    public var json: JSONValue {
        ["userId": .string(userId), "appTransactionId": .optional(appTransactionId),
         "originalTransactionId": .optional(originalTransactionId), "appAccountToken": .optional(appAccountToken),
         "eventId": .string(eventId), "recordedAt": .timestamp(recordedAt)]
    }

    /// The Apple identifiers the link names.
    var appleIdentifiers: [String] { [appTransactionId, originalTransactionId].compactMap { $0 } }

    /// The links the StoreKit events among `facts` make (retracted ones withdrawn by the caller).
    static func links(in facts: [EventFacts]) -> [IdentityLink] {
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

    /// The JSON form (an element of `person.conflicts`).
    public var json: JSONValue {
        ["kind": .string(kind), "subject": .string(subject), "linkedTo": .array(linkedTo.map(JSONValue.string))]
    }
}

/// A person's entitlements at a moment: the answer of `GET /v1/entitlements/{id}` and
/// `seatledger entitlements ID`.
public struct EntitlementAnswer: Sendable {
    /// The identifier asked about.
    public let identifier: String
    /// The valid time asked about.
    public let asOf: EpochMillis
    /// The transaction time asked about (`nil`: everything recorded).
    public let knownAt: EpochMillis?
    /// The ledger's app.
    public let bundleId: String
    /// The ledger's environment.
    public let environment: String
    /// The app's user ids linked to the person.
    public let userIds: [String]
    /// The Apple identifiers the answer searched (the identifier and those linked to it).
    public let identifiers: [String]
    /// The links that name the person, oldest first.
    public let links: [IdentityLink]
    /// Conflicting links, if any.
    public let conflicts: [LinkConflict]
    /// One entitlement per product, entitled first.
    public let entitlements: [ProductEntitlement]

    /// The next moment the answer changes without news (the earliest end of an entitled
    /// source), for caching; `nil` when nothing entitled has a known end.
    public var changesAt: EpochMillis? { entitlements.compactMap(\.changesAt).min() }

    /// The JSON contract (`Events/api/entitlements.md`).
    public var json: JSONValue { json(withAsOf: true) }

    /// The JSON contract, with `asOf` `null` when `withAsOf` is false (what an `ETag` digests:
    /// the answer's content without the moment, which moves with the clock).
    public func json(withAsOf: Bool) -> JSONValue {
        [
            "identifier": .string(identifier), "asOf": withAsOf ? .timestamp(asOf) : .null, "knownAt": .timestamp(knownAt),
            "bundleId": .string(bundleId), "environment": .string(environment),
            "person": [
                "userIds": .array(userIds.map(JSONValue.string)),
                "identifiers": .array(identifiers.map(JSONValue.string)),
                "links": .array(links.map(\.json)),
                "conflicts": .array(conflicts.map(\.json)),
            ],
            "entitlements": .array(entitlements.map { $0.json(bundleId: bundleId, environment: environment) }),
        ]
    }
}

extension EntitlementAnswer {
    /// The same answer with only the entitlements `isIncluded` keeps (the `product` and
    /// `environment` filters).
    public func keeping(_ isIncluded: (ProductEntitlement) -> Bool) -> EntitlementAnswer {
        EntitlementAnswer(identifier: identifier, asOf: asOf, knownAt: knownAt, bundleId: bundleId, environment: environment,
                          userIds: userIds, identifiers: identifiers, links: links, conflicts: conflicts,
                          entitlements: entitlements.filter(isIncluded))
    }
}

/// Nothing in the ledger names the identifier: no group, no individual subscription, no link.
public struct PersonNotFound: Error, Sendable, CustomStringConvertible {
    /// The identifier asked about.
    public let identifier: String
    /// The text a person reads.
    public var description: String {
        "nothing in this ledger names \(identifier) (try the app's user id the app server linked, an appTransactionId, an "
            + "originalTransactionId, a transaction id or a seatClaimId)"
    }
}

extension Ledger {
    /// The entitlements of the person `identifier` names, per product, at `asOf` with what was
    /// recorded by `knownAt`: group memberships (purchaser, assigned seat, developer-hosted claim,
    /// Family Sharing) and individual subscriptions of the same products.
    ///
    /// `identifier` is the app's user id (resolved through the StoreKit links the app server
    /// made), or any of Apple's identifiers of the person. A user id linked to several Apple
    /// identities answers for all of them; an Apple identity linked to several user ids answers
    /// the same for each; both are listed in `conflicts`.
    public func entitlements(_ identifier: String, asOf: EpochMillis, knownAt: EpochMillis? = nil) throws -> EntitlementAnswer {
        let maintainer = ProjectionMaintainer(store: store)
        return try store.read {
            func visible(_ facts: [EventFacts]) -> [EventFacts] {
                Retraction.withdraw(knownAt.map { knownAt in facts.filter { $0.recordedAt <= knownAt } } ?? facts)
            }
            let mentioning = try maintainer.loadFacts(try store.positions(mentioningAny: [identifier]))
            var links = IdentityLink.links(in: visible(mentioning))
            // The identifier is a user id when a link names it so; its Apple identities are searched too.
            let asUser = links.filter { $0.userId == identifier }
            var searched = [identifier]
            for id in asUser.flatMap(\.appleIdentifiers) where !searched.contains(id) { searched.append(id) }
            var facts = mentioning
            if searched.count > 1 {
                let more = try store.positions(mentioningAny: Set(searched.dropFirst())).subtracting(mentioning.map(\.position))
                facts += try maintainer.loadFacts(more)
                links = IdentityLink.links(in: visible(facts))
            }
            var grants: [EntitlementGrant] = []
            var found = !asUser.isEmpty
            for id in searched {
                let own = id == identifier ? mentioning : nil
                guard let entries = try memberEntries(id, asOf: asOf, knownAt: knownAt, mentioning: own) else { continue }
                found = true
                for entry in entries {
                    guard let member = MemberState(json: entry.member) else { continue }
                    grants.append(EntitlementGrant(member: member, groupKey: entry.groupKey, productId: entry.productId,
                                                   purchaserOriginalTransactionId: entry.purchaserOriginalTransactionId,
                                                   status: GroupStatus(rawValue: entry.status)))
                }
            }
            for otid in SubscriptionProjection.subscriptions(naming: Set(searched), in: facts).sorted() {
                found = true
                let own = try maintainer.loadFacts(try store.positions(mentioningAny: [otid]))
                if let state = SubscriptionProjection.project(originalTransactionId: otid, facts: own, asOf: asOf, knownAt: knownAt) {
                    grants.append(EntitlementGrant(subscription: state))
                }
            }
            guard found else { throw PersonNotFound(identifier: identifier) }
            let searchedSet = Set(searched)
            let person = links.filter { $0.userId == identifier || !searchedSet.isDisjoint(with: $0.appleIdentifiers) }
                .sorted { ($0.recordedAt, $0.eventId) < ($1.recordedAt, $1.eventId) }
            return EntitlementAnswer(identifier: identifier, asOf: asOf, knownAt: knownAt, bundleId: configuration.bundleId,
                                     environment: configuration.environment.rawValue,
                                     userIds: Array(Set(person.map(\.userId))).sorted(), identifiers: searched,
                                     links: person, conflicts: Self.conflicts(person), entitlements: Entitlements.byProduct(grants))
        }
    }

    /// The conflicts among `links`: a user id linked to several `appTransactionId`s (Apple
    /// Accounts), and an Apple identifier linked to several user ids.
    static func conflicts(_ links: [IdentityLink]) -> [LinkConflict] {
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
